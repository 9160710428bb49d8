// Where a restore hint may go (issue #23 item 7): the advertised URL pinned to the address the
// Scout connected from, or kept for a host in RESTORE_HINT_HOSTS; nothing else is ever a target.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isHintTarget, pinnedHintUrl } from '../../../src/station/services/hint-target.ts';

describe('restore hint targets', () => {
  const listed = ['scout-1.lan', 'fd00::5'];

  test('the host becomes the connecting address; port, path and scheme stay; credentials go', () => {
    assert.equal(
      pinnedHintUrl('http://evil.example:6556/base', '10.0.0.7', listed),
      'http://10.0.0.7:6556/base',
    );
    assert.equal(
      pinnedHintUrl('https://u:p@127.0.0.1:22/', '192.168.1.9', listed),
      'https://192.168.1.9:22/',
    );
    assert.equal(pinnedHintUrl('http://[::1]:6556', '2001:db8::9', listed), 'http://[2001:db8::9]:6556/');
  });

  test('a listed host is kept as advertised (names and IPv6 in brackets)', () => {
    assert.equal(pinnedHintUrl('https://Scout-1.LAN:6556/', '10.0.0.7', listed), 'https://scout-1.lan:6556/');
    assert.equal(pinnedHintUrl('http://[fd00::5]:6556', '10.0.0.7', listed), 'http://[fd00::5]:6556/');
  });

  test('nothing is kept without an address to pin to, or for another scheme', () => {
    assert.equal(pinnedHintUrl('http://scout:6556', 'unknown', listed), undefined);
    assert.equal(pinnedHintUrl('file:///etc/passwd', '10.0.0.7', listed), undefined);
    assert.equal(pinnedHintUrl('not a url', '10.0.0.7', listed), undefined);
    assert.equal(pinnedHintUrl(undefined, '10.0.0.7', listed), undefined);
  });

  test('a hint goes only to an IP address or a listed host', () => {
    assert.equal(isHintTarget(new URL('http://10.0.0.7:1/'), listed), true);
    assert.equal(isHintTarget(new URL('http://[fd00::5]:1/'), listed), true);
    assert.equal(isHintTarget(new URL('http://scout-1.lan/'), listed), true);
    assert.equal(isHintTarget(new URL('http://metadata.internal/'), listed), false);
  });
});
