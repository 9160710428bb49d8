// The operator's guide, section 9 "Object storage and several Stations", and
// deploy/docker-compose.scale.yml against the code: the least-rights bucket policy allows every
// S3 request the Station sends (read from the source, so a new request type fails here until
// the policy names it), the lifecycle rule outlives the Station's 24-hour abandonment, the
// compose file runs two Stations on one database and bucket behind a balancer they trust, and
// the README's environment table lists the storage variables. (The lifecycle rule is applied
// to a real bucket in test/e2e/two-stations.test.ts.)

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { ROOT } from '../../helpers/server.ts';

const guide = readFileSync(join(ROOT, 'docs', 'operators-guide.md'), 'utf8');

/** The text of `## heading` up to the next `## `. */
function chapter(heading: string): string {
  const start = guide.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `the guide has "## ${heading}"`);
  const rest = guide.slice(start + heading.length + 5);
  const end = rest.search(/\n## /);
  return end < 0 ? rest : rest.slice(0, end);
}

const section = chapter('9. Object storage and several Stations');
const jsonBlocks = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1] ?? ''));

/** The IAM action each S3 command of the SDK needs. */
const ACTION_OF: Record<string, string> = {
  GetObjectCommand: 's3:GetObject',
  HeadObjectCommand: 's3:GetObject',
  PutObjectCommand: 's3:PutObject',
  CreateMultipartUploadCommand: 's3:PutObject',
  UploadPartCommand: 's3:PutObject',
  CompleteMultipartUploadCommand: 's3:PutObject',
  DeleteObjectCommand: 's3:DeleteObject',
  DeleteObjectsCommand: 's3:DeleteObject',
  ListObjectsV2Command: 's3:ListBucket',
  HeadBucketCommand: 's3:ListBucket',
  ListMultipartUploadsCommand: 's3:ListBucketMultipartUploads',
  AbortMultipartUploadCommand: 's3:AbortMultipartUpload',
  ListPartsCommand: 's3:ListMultipartUploadParts',
  CreateBucketCommand: 's3:CreateBucket',
  // Sent only with S3_OBJECT_LOCK (LOCK_ACTIONS below): not in the least-rights policy.
  GetObjectLockConfigurationCommand: 's3:GetBucketObjectLockConfiguration',
  PutObjectRetentionCommand: 's3:PutObjectRetention',
  ListObjectVersionsCommand: 's3:ListBucketVersions',
};

/** What only an object-locked bucket needs; the guide lists them beside S3_OBJECT_LOCK. */
const LOCK_ACTIONS = new Set([
  's3:GetBucketObjectLockConfiguration',
  's3:PutObjectRetention',
  's3:ListBucketVersions',
]);

/** Every `new XCommand(` in the Station's storage code and the CLI. */
function commandsSent(): Set<string> {
  const found = new Set<string>();
  for (const dir of ['src/station/storage', 'src/cli', 'src/station/uploads', 'src/station/services']) {
    for (const name of readdirSync(join(ROOT, dir)).filter((n) => n.endsWith('.ts'))) {
      const text = readFileSync(join(ROOT, dir, name), 'utf8');
      for (const match of text.matchAll(/new (\w+Command)\(/g)) found.add(match[1] ?? '');
    }
  }
  return found;
}

/** The variables of object storage and several Stations, in the guide's table and the README's. */
const STORAGE_VARIABLES = [
  'STORAGE_URL',
  'S3_ENDPOINT',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_REGION',
  'S3_FORCE_PATH_STYLE',
  'DATABASE_URL',
];

describe('operator’s guide: object storage and several Stations', () => {
  test('the bucket policy allows every S3 request the Station sends, CreateBucket only as an option', () => {
    const policy = jsonBlocks.find((b) => b.Statement);
    assert.ok(policy, 'the section holds a policy document');
    const allowed = new Set<string>(policy.Statement.flatMap((s: { Action: string[] }) => s.Action));
    const sent = commandsSent();
    assert.ok(sent.has('UploadPartCommand'), `the S3 store's requests are found: ${[...sent]}`);
    for (const command of sent) {
      const action = ACTION_OF[command];
      assert.ok(
        action,
        `${command}: which IAM action does it need? Add it to the guide's policy and to ACTION_OF`,
      );
      if (action === 's3:CreateBucket') continue;
      if (LOCK_ACTIONS.has(action)) {
        assert.match(section, new RegExp(action), `the guide says S3_OBJECT_LOCK needs ${action}`);
        continue;
      }
      assert.ok(allowed.has(action), `${command} needs ${action}, which the guide's policy does not allow`);
    }
    assert.equal(allowed.has('s3:CreateBucket'), false, 'CreateBucket is not in the least-rights policy');
    assert.match(section, /s3:CreateBucket/, 'the guide says when to add CreateBucket');
    for (const action of allowed)
      assert.match(action, /^s3:(Get|Put|Delete|List|Abort)/, `only what is needed: ${action}`);
    // Bucket-level and object-level actions are on the right resources.
    for (const statement of policy.Statement) {
      const onObjects = statement.Resource.endsWith('/*');
      for (const action of statement.Action)
        assert.equal(
          onObjects,
          !action.startsWith('s3:List') || action === 's3:ListMultipartUploadParts',
          `${action} on ${statement.Resource}`,
        );
    }
  });

  test('the lifecycle rule aborts incomplete multipart uploads, later than the Station’s 24-hour sweep', () => {
    const lifecycle = jsonBlocks.find((b) => b.Rules);
    assert.ok(lifecycle, 'the section holds a lifecycle configuration');
    const [rule] = lifecycle.Rules;
    assert.equal(rule.Status, 'Enabled');
    assert.ok(rule.AbortIncompleteMultipartUpload.DaysAfterInitiation >= 2);
    assert.equal(rule.Expiration, undefined, 'no expiry of snapshots behind the Station’s retention');
  });

  test('the section names every variable and the move-storage command', () => {
    for (const name of STORAGE_VARIABLES)
      assert.match(section, new RegExp(`\\| \`${name}\` `), `the variables table lists ${name}`);
    assert.match(section, /backupd station move-storage --to s3:\/\//);
    assert.match(section, /docker-compose\.scale\.yml/);
    assert.match(
      guide,
      /\[9\. Object storage and several Stations\]\(#9-object-storage-and-several-stations\)/,
    );
  });

  test('docker-compose.scale.yml: two Stations on one database and bucket behind a balancer they trust', () => {
    const compose = parse(readFileSync(join(ROOT, 'deploy', 'docker-compose.scale.yml'), 'utf8'), {
      merge: true,
    });
    const services = compose.services;
    assert.ok(services.postgres?.image.startsWith('postgres:'));
    const stations = ['station-1', 'station-2'].map((name) => services[name]);
    const [one, two] = stations;
    assert.ok(one && two);
    for (const station of stations) {
      assert.deepEqual(station.command, ['station', 'serve']);
      assert.match(station.environment.DATABASE_URL, /^postgres:\/\/[^@]+@postgres:5432\//);
      assert.match(station.environment.STORAGE_URL, /STORAGE_URL/);
      for (const name of ['S3_ENDPOINT', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REGION'])
        assert.ok(name in station.environment, `${name} is passed to the Station`);
      assert.equal(station.depends_on.postgres.condition, 'service_healthy');
    }
    assert.equal(one.environment.DATABASE_URL, two.environment.DATABASE_URL);
    assert.equal(one.environment.STORAGE_URL, two.environment.STORAGE_URL);
    assert.notDeepEqual(one.volumes, two.volumes, 'each Station has a data dir of its own');
    const balancer = services.balancer;
    const upstreams = balancer.command.filter((_: string, i: number) => balancer.command[i - 1] === '--to');
    assert.deepEqual(upstreams, ['station-1:6555', 'station-2:6555']);
    assert.equal(one.environment.TRUST_PROXY, balancer.networks.backupd.ipv4_address);
    const subnet = compose.networks.backupd.ipam.config[0].subnet as string;
    assert.ok(balancer.networks.backupd.ipv4_address.startsWith(subnet.replace(/0\/24$/, '')));
  });

  test('the README’s environment table lists the storage variables', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    for (const name of STORAGE_VARIABLES)
      assert.match(readme, new RegExp(`^\\| \`${name}\` +\\| Station `, 'm'), `README lists ${name}`);
  });
});
