import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getCACertificates } from 'node:tls';
import { trustSystemCertificates } from '../../src/core/tls/system-ca.ts';

test('outgoing TLS trusts the system CA store besides the bundled one', () => {
  const system = getCACertificates('system');
  const count = trustSystemCertificates();
  const defaults = new Set(getCACertificates('default'));
  assert.ok(count >= getCACertificates('bundled').length);
  for (const cert of system) assert.ok(defaults.has(cert), 'every system CA is trusted by default');
});
