import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { inspect } from 'node:util';
import { ConfigError, loadStationConfig } from '../../src/core/config.ts';

const KEYS = { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'very-secret-key' };

describe('STORAGE_URL and the S3 variables', () => {
  test('unset: the disk store', () => {
    assert.equal(loadStationConfig({}, {}).s3, undefined);
  });

  test('S3_OBJECT_LOCK with S3_OBJECT_LOCK_DAYS; each wrong use is one ConfigError naming it', () => {
    const url = { STORAGE_URL: 's3://locked' };
    assert.equal(loadStationConfig({}, url).s3?.objectLock, undefined);
    assert.deepEqual(
      loadStationConfig({}, { ...url, S3_OBJECT_LOCK: 'Compliance', S3_OBJECT_LOCK_DAYS: '30' }).s3
        ?.objectLock,
      { mode: 'COMPLIANCE', days: 30 },
    );
    assert.equal(
      loadStationConfig({}, { ...url, S3_OBJECT_LOCK: 'governance', S3_OBJECT_LOCK_DAYS: '1' }).s3?.objectLock
        ?.mode,
      'GOVERNANCE',
    );
    for (const [env, message] of [
      [
        { ...url, S3_OBJECT_LOCK: 'forever', S3_OBJECT_LOCK_DAYS: '1' },
        /S3_OBJECT_LOCK must be governance or compliance/,
      ],
      [{ ...url, S3_OBJECT_LOCK: 'compliance' }, /S3_OBJECT_LOCK_DAYS must be/],
      [{ ...url, S3_OBJECT_LOCK: 'compliance', S3_OBJECT_LOCK_DAYS: '0' }, /S3_OBJECT_LOCK_DAYS must be/],
      [{ ...url, S3_OBJECT_LOCK: 'compliance', S3_OBJECT_LOCK_DAYS: '1.5' }, /S3_OBJECT_LOCK_DAYS must be/],
      [{ ...url, S3_OBJECT_LOCK_DAYS: '3' }, /S3_OBJECT_LOCK is not/],
      [{ S3_OBJECT_LOCK: 'compliance', S3_OBJECT_LOCK_DAYS: '3' }, /S3_OBJECT_LOCK needs a bucket/],
    ] as const) {
      assert.throws(
        () => loadStationConfig({}, env),
        (error: Error) => error instanceof ConfigError && message.test(error.message),
      );
    }
  });

  test('a bucket with a prefix behind an endpoint: path style by default', () => {
    const { s3 } = loadStationConfig(
      {},
      { STORAGE_URL: 's3://backups/site-a/station/', S3_ENDPOINT: 'http://127.0.0.1:7480/', ...KEYS },
    );
    assert.equal(s3?.bucket, 'backups');
    assert.equal(s3?.prefix, 'site-a/station/');
    assert.equal(s3?.endpoint, 'http://127.0.0.1:7480');
    assert.equal(s3?.region, 'us-east-1');
    assert.equal(s3?.forcePathStyle, true);
    assert.equal(s3?.credentials?.accessKeyId, 'AKIDEXAMPLE');
    assert.equal(s3?.credentials?.secretAccessKey, 'very-secret-key');
  });

  test('AWS: no endpoint, virtual-hosted style, the region, the SDK chain without keys', () => {
    const { s3 } = loadStationConfig({}, { STORAGE_URL: 's3://my.bucket', AWS_REGION: 'eu-central-1' });
    assert.equal(s3?.prefix, '');
    assert.equal(s3?.endpoint, undefined);
    assert.equal(s3?.region, 'eu-central-1');
    assert.equal(s3?.forcePathStyle, false);
    assert.equal(s3?.credentials, undefined);
  });

  test('S3_FORCE_PATH_STYLE wins over the default', () => {
    const env = { STORAGE_URL: 's3://bucket', S3_ENDPOINT: 'https://s3.example.net' };
    assert.equal(loadStationConfig({}, { ...env, S3_FORCE_PATH_STYLE: 'false' }).s3?.forcePathStyle, false);
    assert.equal(
      loadStationConfig({}, { STORAGE_URL: 's3://bucket', S3_FORCE_PATH_STYLE: 'true' }).s3?.forcePathStyle,
      true,
    );
  });

  test('the secret key never shows in a serialised or inspected config', () => {
    const config = loadStationConfig({}, { STORAGE_URL: 's3://bucket', ...KEYS });
    assert.doesNotMatch(JSON.stringify(config), /very-secret-key/);
    assert.doesNotMatch(inspect(config, { depth: 5 }), /very-secret-key/);
  });

  const bad: [Record<string, string>, RegExp][] = [
    [{ STORAGE_URL: 'file:///srv/backups' }, /STORAGE_URL must look like s3:\/\/BUCKET/],
    [{ STORAGE_URL: 's3://' }, /STORAGE_URL must look like/],
    [{ STORAGE_URL: 's3://Bad_Bucket' }, /bucket "Bad_Bucket"/],
    [{ STORAGE_URL: 's3://bucket/a/../b' }, /prefix may hold only/],
    [{ STORAGE_URL: 's3://bucket/a b' }, /prefix may hold only/],
    [{ STORAGE_URL: 's3://bucket', S3_ENDPOINT: 'ftp://host' }, /S3_ENDPOINT must be an http/],
    [{ STORAGE_URL: 's3://bucket', S3_ENDPOINT: 'http://host/path' }, /without a path/],
    [
      { STORAGE_URL: 's3://bucket', S3_FORCE_PATH_STYLE: 'maybe' },
      /S3_FORCE_PATH_STYLE must be true or false/,
    ],
    [{ STORAGE_URL: 's3://bucket', AWS_ACCESS_KEY_ID: 'only-the-id' }, /must be set together/],
  ];
  for (const [env, message] of bad) {
    test(`refused with a clear message: ${JSON.stringify(env)}`, () => {
      assert.throws(
        () => loadStationConfig({}, env),
        (error: unknown) => error instanceof ConfigError && message.test(error.message),
      );
    });
  }
});
