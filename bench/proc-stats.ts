// What the benches read of a process from /proc (Linux): memory and CPU time.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const MIB = 1024 * 1024;
/** Clock ticks per second, the unit of utime/stime in /proc/<pid>/stat. */
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

function statusKib(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(line?.replace(/\D+/g, '') ?? 0);
}

/** The highest resident memory of the process since it started, in MiB. */
export const peakRssMib = (pid: number): number => statusKib(pid, 'VmHWM') / 1024;

/** The resident memory of the process now, in MiB. */
export const rssMib = (pid: number): number => statusKib(pid, 'VmRSS') / 1024;

/**
 * User + system CPU seconds the process has used so far, with those of the child processes it
 * has waited for (the Scout's `getfattr`, which lists an archive's extended attributes): the
 * reference tools are timed with all their processes too.
 */
export function cpuSeconds(pid: number): number {
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime, stime, cutime, cstime
  return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / TICKS;
}

/**
 * Samples the resident memory of `pid` every `everyMs` while `work` runs; returns the work's
 * result with the lowest and highest sample (to show memory staying flat through it).
 */
export async function sampleRss<T>(
  pid: number,
  work: () => Promise<T>,
  everyMs = 100,
): Promise<{ result: T; minMib: number; maxMib: number }> {
  let minMib = rssMib(pid);
  let maxMib = minMib;
  const timer = setInterval(() => {
    const now = rssMib(pid);
    minMib = Math.min(minMib, now);
    maxMib = Math.max(maxMib, now);
  }, everyMs);
  try {
    return { result: await work(), minMib, maxMib };
  } finally {
    clearInterval(timer);
  }
}

export const mib = (bytes: number): number => bytes / MIB;
