// The JSON log lines a test server wrote (pino, one object a line).
import assert from 'node:assert/strict';
import type { TestServer } from './server.ts';

export type LogLine = Record<string, unknown> & { level: number; msg: string };

export function logLines(server: TestServer): LogLine[] {
  return server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

/** Log lines reach us through a pipe after the response: wait briefly for a matching one. */
export async function logLine(server: TestServer, match: (line: LogLine) => boolean): Promise<LogLine> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found = logLines(server).find(match);
    if (found) return found;
    if (Date.now() > deadline) assert.fail(`no such log line in:\n${server.output().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
