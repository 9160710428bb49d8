// The repository documents itself: every route either role serves (read from the source, as
// the route fuzz reads it) is listed in docs/api.md, docs/api-jobs.md or docs/protocol.md. A
// route added without its line in the docs fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { discoverRoutes } from '../e2e/fuzz-kit.ts';
import { ROOT } from '../helpers/server.ts';

const DOCS = ['docs/api.md', 'docs/api-jobs.md', 'docs/protocol.md'];

/** `/api/x/{a}/{b}` → `/api/x/:/:`: parameters by position, whatever their names. */
const shape = (path: string) =>
  path
    .replace(/\[[^\]]*\]$/, '')
    .replace(/\?.*$/, '')
    .replace(/\{[^}]*\}|:[A-Za-z]+/g, ':');

/** Every path the docs name in a code span (methods, queries and optional parts left off). */
function documentedPaths(): string[] {
  const paths: string[] = [];
  for (const doc of DOCS) {
    const text = readFileSync(join(ROOT, doc), 'utf8');
    for (const [, span = ''] of text.matchAll(/`([^`\n]*\/[^`\n]*)`/g)) {
      const path = span.replace(/^[A-Z]+(?:\/[A-Z]+)* /, '');
      if (path.startsWith('/') || path.startsWith('…/')) paths.push(shape(path));
    }
  }
  return paths;
}

test('every /api, /backup, /health and /metrics route of both roles is in the docs', () => {
  const documented = documentedPaths();
  const missing: string[] = [];
  for (const role of ['station', 'scout'] as const) {
    for (const route of discoverRoutes(role)) {
      if (!/^\/(api|backup|health|metrics)\b/.test(route.path)) continue;
      const wanted = shape(route.path);
      const found = documented.some((doc) =>
        doc.startsWith('…/')
          ? wanted.endsWith(doc.slice(1))
          : doc === wanted || (doc.lastIndexOf('/') === 0 && wanted.endsWith(doc)),
      );
      if (!found) missing.push(`${role}: ${route.method} ${route.path}`);
    }
  }
  assert.deepEqual(missing, [], `routes the docs do not list (${DOCS.join(', ')})`);
});
