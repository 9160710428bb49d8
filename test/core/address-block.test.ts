// What the per-address limits count under (issue #23 item 2): an IPv6 client by its /64, since
// a host can pick any address in its /64; IPv4 and anything else as it is.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addressBlock } from '../../src/core/auth/address-block.ts';

test('IPv6 addresses count by their /64, in every spelling', () => {
  const block = '2001:db8:1:2::/64';
  for (const address of [
    '2001:db8:1:2::1',
    '2001:DB8:1:2:ffff:ffff:ffff:ffff',
    '2001:0db8:0001:0002::',
    '2001:db8:1:2:0:0:1.2.3.4',
  ])
    assert.equal(addressBlock(address), block, address);
  assert.equal(addressBlock('2001:db8:1:3::1'), '2001:db8:1:3::/64');
  assert.equal(addressBlock('2001:db8::1'), '2001:db8:0:0::/64');
  assert.equal(addressBlock('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.equal(addressBlock('::1'), '0:0:0:0::/64');
});

test('IPv4 addresses and anything else are kept as they are', () => {
  for (const address of ['203.0.113.7', '127.0.0.1', 'unknown', ''])
    assert.equal(addressBlock(address), address);
});
