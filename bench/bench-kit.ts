// What more than one bench needs: a file of random bytes and an upload of it through a Station.
import { createHash, randomBytes } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { archiveMeta, call, finalize, initiate } from '../test/helpers/uploads.ts';

const MIB = 1024 * 1024;

/** Writes `bytes` random bytes to `path` in 8 MiB blocks; returns their SHA-256. */
export function makeRandomFile(path: string, bytes: number): string {
  const hash = createHash('sha256');
  writeFileSync(path, '');
  for (let done = 0; done < bytes; done += 8 * MIB) {
    const chunk = randomBytes(Math.min(8 * MIB, bytes - done));
    hash.update(chunk);
    writeFileSync(path, chunk, { flag: 'a' });
  }
  return hash.digest('hex');
}

/** Uploads a file as a Scout does: chunks of the recommended size, one chunk in memory. */
export async function uploadFile(url: string, token: string, path: string, sha: string, instance: string) {
  const size = statSync(path).size;
  const meta = archiveMeta(Buffer.alloc(0), {
    scout_instance_id: instance,
    archive_size_bytes: size,
    archive_sha256: sha,
  });
  const started = await initiate(url, token, meta);
  if (started.status !== 200) throw new Error(`initiate: ${JSON.stringify(started.body)}`);
  const chunkSize: number = started.body.recommended_chunk_size_bytes;
  const file = await open(path, 'r');
  try {
    let offset = 0;
    const buffer = Buffer.alloc(chunkSize);
    while (offset < size) {
      const { bytesRead } = await file.read(buffer, 0, Math.min(chunkSize, size - offset), offset);
      const path = `/backup/uploads/${started.body.upload_id}/chunk?offset=${offset}`;
      const reply = await call(url, 'PUT', path, token, buffer.subarray(0, bytesRead));
      if (reply.status !== 200) throw new Error(`chunk: ${JSON.stringify(reply.body)}`);
      offset = reply.body.next_offset;
    }
  } finally {
    await file.close();
  }
  const done = await finalize(url, token, started.body.upload_id);
  if (done.status !== 200) throw new Error(`finalize: ${JSON.stringify(done.body)}`);
  return { scoutId: meta.scout_id, filename: String(done.body.stored_as ?? done.body.filename) };
}

/** A measured figure against its target; `value` null when it could not be measured. */
export interface Check {
  what: string;
  value: number | null;
  /** Whether the value must be at least or at most the target. */
  at: 'least' | 'most';
  target: number;
  unit: '×' | ' MiB' | ' s';
}

/** A speed ratio: the reference's time ÷ ours (above 1: we are faster). */
export const ratio = (referenceSeconds: number, seconds: number): number => referenceSeconds / seconds;

const figure = (value: number, unit: Check['unit']) =>
  `${unit === ' MiB' ? Math.round(value) : value.toFixed(2)}${unit}`;

/** "0.93× PASS", "261 MiB MISS", or "— (not measured)". */
export function verdict(check: Check): string {
  if (check.value === null || !Number.isFinite(check.value)) return '— (not measured)';
  const pass = check.at === 'least' ? check.value >= check.target : check.value <= check.target;
  return `${figure(check.value, check.unit)} ${pass ? 'PASS' : 'MISS'}`;
}

/**
 * A Markdown table of targets: one row per check, one column per run (dataset), the target
 * beside; then `overall` checks (across runs) with their own value column.
 */
export function checksTable(runs: { column: string; checks: Check[] }[], overall: Check[] = []): string {
  const target = (c: Check) => `${c.at === 'least' ? '≥' : '≤'} ${figure(c.target, c.unit)}`;
  const names = [...new Set(runs.flatMap((r) => r.checks.map((c) => c.what)))];
  const lines = [
    `| target | goal | ${runs.map((r) => r.column).join(' | ')} |`,
    `| --- | --- | ${runs.map(() => '---').join(' | ')} |`,
  ];
  for (const name of names) {
    const first = runs.flatMap((r) => r.checks).find((c) => c.what === name) as Check;
    const cells = runs.map((r) => {
      const check = r.checks.find((c) => c.what === name);
      return check ? verdict(check) : '—';
    });
    lines.push(`| ${name} | ${target(first)} | ${cells.join(' | ')} |`);
  }
  for (const check of overall) {
    lines.push(
      `| ${check.what} | ${target(check)} | ${verdict(check)}${runs.length > 1 ? ' | '.repeat(runs.length - 1) : ''} |`,
    );
  }
  return lines.join('\n');
}

/**
 * Lifts the 300 s limits of Node's fetch (undici's headersTimeout and bodyTimeout): the Scout
 * answers a restore only when it is done, and a restore of a million files may take longer.
 * Node's own undici has no import; its Agent class is the global dispatcher's.
 */
export async function fetchWithoutTimeouts(): Promise<void> {
  const key = Symbol.for('undici.globalDispatcher.1');
  const global = globalThis as unknown as Record<symbol, { constructor: new (options: object) => unknown }>;
  // The first fetch makes the dispatcher (port 9, discard: refused at once).
  if (!global[key]) await fetch('http://127.0.0.1:9/').catch(() => {});
  const Agent = global[key]?.constructor;
  if (Agent) global[key] = new Agent({ headersTimeout: 0, bodyTimeout: 0 }) as (typeof global)[symbol];
}
