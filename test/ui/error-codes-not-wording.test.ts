// The web UIs choose badges and messages by an error's stable `code`, never by its English
// wording (issue #17): no code under web/ tests an error's text with a regular expression or a
// substring search.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers/server.ts';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** Something that holds an error's words: error, detail, message, reason (and their fields). */
const WORDY = /\b\w*(error|detail|message|reason)\w*\b/i;
const REGEX_ON = /\/(?:\\.|[^/\n])+\/[dgimsuy]*\.(?:test|exec)\(([^)]*)\)/g;
const SEARCH_IN =
  /\b(\w*(?:error|detail|message|reason)\w*)\??\.(?:match|includes|startsWith|endsWith|search)\(/gi;

test('no web code matches on error wording', () => {
  const found: string[] = [];
  for (const file of sources(join(ROOT, 'web'))) {
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      const where = `${file.slice(ROOT.length)}:${i + 1}: ${line.trim()}`;
      for (const match of line.matchAll(REGEX_ON)) if (WORDY.test(match[1] ?? '')) found.push(where);
      if (SEARCH_IN.test(line)) found.push(where);
      SEARCH_IN.lastIndex = 0;
    });
  }
  assert.deepEqual(found, [], "choose by the answer's `code` instead");
});
