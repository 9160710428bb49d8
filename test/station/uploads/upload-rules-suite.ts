// What finalize decides beyond storing: unusual snapshots (size, key) and retention
// (retention_keep_last, retention_keep_within_days). Runs on PGlite and on PostgreSQL.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { sha256 } from '../../helpers/hashes.ts';
import { storedNames } from '../../helpers/station-store.ts';
import { assertOk, instanceId, MAX_UPLOAD, type StartStation, unique, useStation } from './uploads-kit.ts';

export function uploadRulesSuite(label: string, start: StartStation): void {
  describe(label, () => {
    const ctx = useStation(start, 'main', { MAX_UPLOAD_BYTES: String(MAX_UPLOAD) });
    const { mint, overviewJob, store, meta } = ctx;

    describe('unusual snapshots', () => {
      test('less than half, more than double, or another key fingerprint is unusual', async () => {
        const { credential } = await mint(ctx.admin, {});
        const scout = unique('unusual');
        const inst = instanceId();
        const keyA = sha256(randomBytes(8));
        const keyB = sha256(randomBytes(8));
        const steps: Array<{ size: number; key: string; unusual: boolean; why?: RegExp }> = [
          { size: 200_000, key: keyA, unusual: false },
          { size: 100_000, key: keyA, unusual: false }, // exactly half
          { size: 49_999, key: keyA, unusual: true, why: /half|small|less/i },
          { size: 99_998, key: keyA, unusual: false }, // exactly double
          { size: 200_000, key: keyA, unusual: true, why: /double|large|more/i },
          { size: 210_000, key: keyB, unusual: true, why: /key|fingerprint/i },
          { size: 220_000, key: keyB, unusual: false },
        ];
        const names: string[] = [];
        for (const step of steps) {
          const data = randomBytes(step.size);
          const done = await store(
            ctx.station.url,
            credential,
            data,
            meta(data, {
              scout_id: scout,
              scout_instance_id: inst,
              job_name: 'docs',
              encryption_key_fingerprint: step.key,
            }),
          );
          names.push(done.stored_as);
          if (step.unusual) {
            assert.equal(done.unusual, true, `${step.size}: ${JSON.stringify(done)}`);
            assert.equal(typeof done.unusual_reason, 'string', JSON.stringify(done));
            assert.match(done.unusual_reason ?? '', step.why as RegExp);
          } else {
            assert.notEqual(done.unusual, true, `${step.size} is not unusual: ${JSON.stringify(done)}`);
          }
        }
        const listed = await overviewJob(ctx.admin, scout, inst, 'docs');
        assert.equal(listed?.length, steps.length);
        steps.forEach((step, i) => {
          const entry = listed?.find((s) => s.name === names[i]);
          assert.ok(entry, `${names[i]} listed`);
          if (step.unusual) {
            assert.equal(entry.unusual, true, JSON.stringify(entry));
            assert.equal(typeof entry.unusual_reason, 'string', JSON.stringify(entry));
          } else {
            assert.notEqual(entry.unusual, true, JSON.stringify(entry));
          }
        });
      });
    });

    // ------------------------------------------------------------------ retention

    describe('retention', () => {
      test('retention_keep_last prunes the job on finalize and reports it; other jobs and instances untouched', async () => {
        const { credential } = await mint(ctx.admin, { shared: true, max_registrations: 2 });
        const scout = unique('retention');
        const inst = instanceId();
        const otherInst = instanceId();
        const upload = async (i: string, job: string) => {
          const data = randomBytes(50_000);
          return store(
            ctx.station.url,
            credential,
            data,
            meta(data, { scout_id: scout, scout_instance_id: i, job_name: job }),
          );
        };
        // Three snapshots each in another job and another instance, kept under the default.
        const otherJob: string[] = [];
        const otherInstance: string[] = [];
        for (let n = 0; n < 3; n += 1) {
          otherJob.push((await upload(inst, 'photos')).stored_as);
          otherInstance.push((await upload(otherInst, 'docs')).stored_as);
        }
        try {
          const set = await ctx.admin.post('/api/settings', {
            retention_keep_last: 2,
            retention_keep_daily: 0,
            retention_keep_weekly: 0,
            retention_keep_monthly: 0,
            retention_keep_yearly: 0,
          });
          assertOk(set);
          assert.equal(set.body.settings.retention_keep_last, 2);

          const names: string[] = [];
          const pruned: string[][] = [];
          for (let n = 0; n < 4; n += 1) {
            const done = await upload(inst, 'docs');
            names.push(done.stored_as);
            pruned.push(done.pruned);
          }
          // The last 2, and the first stored today: uploads of one day count as one (their first)
          // when deciding what came before (src/station/retention/policy.ts, no flush).
          assert.deepEqual(pruned, [[], [], [], [names[1]]]);
          const kept = [names[0], names[2], names[3]].sort();
          const job = (instance: string, name: string) => ({ scout, instance, job: name });
          assert.deepEqual(await storedNames(ctx.station, job(inst, 'docs')), kept);
          const listed = await overviewJob(ctx.admin, scout, inst, 'docs');
          assert.deepEqual(listed?.map((s) => s.name).sort(), kept);

          assert.deepEqual(await storedNames(ctx.station, job(inst, 'photos')), [...otherJob].sort());
          assert.deepEqual(await storedNames(ctx.station, job(otherInst, 'docs')), [...otherInstance].sort());
          assert.equal((await overviewJob(ctx.admin, scout, inst, 'photos'))?.length, 3);
          assert.equal((await overviewJob(ctx.admin, scout, otherInst, 'docs'))?.length, 3);
        } finally {
          assertOk(await ctx.admin.post('/api/settings', {}));
        }
        const reset = await ctx.admin.get('/api/overview?section=settings');
        assert.equal(reset.body.settings.retention_keep_last, 30);
      });
    });

    // ------------------------------------------------------------------ second Station
  });
}
