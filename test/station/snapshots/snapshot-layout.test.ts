// The one snapshot layout (src/station/storage/layout.ts) both stores, the sweep, reconcile,
// verify, move-storage and replication use: checked segments for paths and keys, what a listing
// reads back as a snapshot, and the `scout/instance/job/file` string.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  instanceFolders,
  jobPath,
  snapshotAt,
  snapshotPath,
  snapshotSegments,
} from '../../../src/station/storage/layout.ts';

const key = {
  scoutId: 'host-a',
  instanceId: 'inst-1',
  jobName: 'docs',
  filename: 'docs__2026-11-25T08-00-00Z__0123abcd-2.tar.zst',
};

test('segments and paths: <scout>/<instance>/<job>/<file>, the legacy <scout>/<job>/<file> without an instance', () => {
  assert.deepEqual(snapshotSegments(key), ['host-a', 'inst-1', 'docs', key.filename]);
  assert.deepEqual(snapshotSegments({ ...key, instanceId: null }), ['host-a', 'docs', key.filename]);
  assert.deepEqual(instanceFolders('host-a', 'inst-1'), ['host-a', 'inst-1']);
  assert.equal(snapshotPath(key), `host-a/inst-1/docs/${key.filename}`);
  assert.equal(jobPath(key), 'host-a/inst-1/docs');
  assert.equal(jobPath({ ...key, instanceId: null }), 'host-a/docs');
});

test('every segment is checked: nothing leaves the root or the prefix', () => {
  const bad = (e: { status?: number }) => e.status === 400;
  assert.throws(() => snapshotSegments({ ...key, scoutId: '..' }), bad);
  assert.throws(() => snapshotSegments({ ...key, instanceId: 'a/b' }), bad);
  assert.throws(() => snapshotSegments({ ...key, jobName: '.hidden' }), bad);
  assert.throws(() => snapshotSegments({ ...key, filename: '../x.tar.zst' }), bad);
  assert.throws(() => instanceFolders('host-a', ''), bad);
});

test('a listed path is a snapshot only in the instance layout with a snapshot file name', () => {
  assert.deepEqual(snapshotAt(snapshotSegments(key)), key);
  assert.equal(snapshotAt(['host-a', 'docs', key.filename]), null, 'the legacy layout is not listed');
  assert.equal(snapshotAt(['host-a', 'inst-1', 'docs', 'notes.txt']), null);
  assert.equal(snapshotAt(['host-a', '..', 'docs', key.filename]), null);
  assert.equal(snapshotAt(['a', 'b', 'c', 'd', key.filename]), null);
});
