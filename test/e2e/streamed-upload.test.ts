// Upload while archiving (issue #27 item 2), real Scout and Station processes, on disk and on
// S3 (Ceph): the upload starts with the archive as a streamed upload and stores exactly the
// staged archive's bytes (read back with age | zstd | tar); a SIGKILL of the Scout or of the
// Station while the upload is in flight resumes; a Station that refuses `streamed` (400, an
// older release) still gets the backup. A proxy between them holds the upload part-way, so each
// kill lands while it is in flight without timing anything (test/helpers/upload-proxy.ts).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { unpackWithTools } from '../helpers/archives.ts';
import { onCeph } from '../helpers/ceph.ts';
import { adminClient, type Client } from '../helpers/http.ts';
import { skipUnlessPrograms } from '../helpers/programs.ts';
import {
  jobState,
  mintStationToken,
  passingUploadWaits,
  runNow,
  saveStationSettings,
  scoutStatus,
  startScout,
  startStation,
  waitIdle,
} from '../helpers/scout.ts';
import type { TestServer } from '../helpers/server.ts';
import { startUploadProxy, type UploadProxy } from '../helpers/upload-proxy.ts';

const skip = skipUnlessPrograms(['age', 'zstd', 'tar']);
const MIB = 1024 * 1024;
const LONG = { timeoutMs: 180_000 };

function streamedUploadE2e(label: string, stationEnv: () => Promise<Record<string, string>>): void {
  describe(label, { skip }, () => {
    let station: TestServer;
    let scout: TestServer;
    let stationAdmin: Client;
    let scoutAdmin: Client;
    let proxy: UploadProxy;
    let credential: string;
    let scanRoot: string;
    const work = mkdtempSync(join(tmpdir(), 'backupd-streamed-'));
    const staging = () => join(scout.dataDir, 'staging');

    before(async () => {
      // In a bucket a streamed upload has 16 MiB parts: a 40 MiB archive spans several.
      ({ server: station, admin: stationAdmin } = await startStation({ env: await stationEnv() }));
      proxy = await startUploadProxy(station.url);
      ({ server: scout, admin: scoutAdmin, scanRoot } = await startScout());
      credential = await mintStationToken(stationAdmin);
      await saveStationSettings(scoutAdmin, proxy.url, credential, 'streamed-host');
    });

    after(async () => {
      await proxy?.close();
      await scout?.dispose();
      await station?.dispose();
      rmSync(work, { recursive: true, force: true });
    });

    /** A job folder with `mib` MiB that zstd cannot shrink, so the archive is that large. */
    function job(name: string, mib: number): Buffer {
      const data = randomBytes(mib * MIB);
      mkdirSync(join(scanRoot, name), { recursive: true });
      writeFileSync(join(scanRoot, name, '.upload_dir'), '');
      writeFileSync(join(scanRoot, name, 'noise.bin'), data);
      writeFileSync(join(scanRoot, name, 'note.txt'), `job ${name}`);
      return data;
    }

    async function latest(name: string): Promise<Buffer> {
      const status = await scoutAdmin.get('/api/status');
      const res = await fetch(
        `${station.url}/backup/recovery/${status.body.scout_id}/${status.body.scout_instance_id}/${name}/latest`,
        { headers: { authorization: `Bearer ${credential}` } },
      );
      assert.equal(res.status, 200);
      return Buffer.from(await res.arrayBuffer());
    }

    /** Unpacks `archive` with the age, zstd and tar programs; returns the folder. */
    async function unpack(name: string, archive: Buffer): Promise<string> {
      const key = await scoutAdmin.get('/api/encryption-key');
      const into = join(work, `${name}-restored`);
      unpackWithTools(archive, key.body.age_identity, into);
      return into;
    }

    /** Waits until the job's archive is staged and its upload runs (held by the proxy). */
    async function uploading(name: string): Promise<void> {
      for (let i = 0; i < 6000; i += 1) {
        const op = (await scoutStatus(scoutAdmin)).operation;
        if (op?.job_name === name && op.phase === 'uploading') return;
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.fail(`the upload of ${name} was not seen running`);
    }

    const stagedArchive = (name: string) => {
      const files = readdirSync(staging()).filter((f) => f.startsWith(`${name}-`) && f.endsWith('.tar.zst'));
      assert.equal(files.length, 1, `one staged archive of ${name}: ${files.join(', ')}`);
      return readFileSync(join(staging(), files[0] ?? ''));
    };

    test('the upload runs while the archive is written; age | zstd | tar reads what is stored', async () => {
      const data = job('photos', 40);
      const seen = proxy.initiations.length;
      await runNow(scoutAdmin, LONG);
      const state = await jobState(scoutAdmin, 'photos');
      assert.equal(state.last_status, 'uploaded', state.last_error ?? undefined);
      const [first] = proxy.initiations.slice(seen);
      assert.equal(first?.streamed, true, 'a streamed initiation');
      assert.equal(first?.archive_size_bytes, undefined);
      const out = await unpack('photos', await latest('photos'));
      assert.ok(readFileSync(join(out, 'noise.bin')).equals(data));
      assert.equal(readFileSync(join(out, 'note.txt'), 'utf8'), 'job photos');
      assert.deepEqual(readdirSync(staging()), [], 'nothing left in the Scout staging');
    });

    test('SIGKILL of the Scout mid-upload: the restarted Scout resumes the staged archive; exactly its bytes are stored', async () => {
      job('scoutkill', 40);
      const held = proxy.holdAfter(3 * MIB);
      assert.equal((await scoutAdmin.post('/api/run-now')).body.status, 'queued');
      await held;
      await uploading('scoutkill');
      await scout.kill();
      proxy.release();
      const staged = stagedArchive('scoutkill');
      scout = await scout.restart();
      scoutAdmin = await adminClient(scout.url);
      assert.equal((await jobState(scoutAdmin, 'scoutkill')).staged, true);
      await runNow(scoutAdmin, LONG);
      const state = await jobState(scoutAdmin, 'scoutkill');
      assert.equal(state.last_status, 'uploaded', state.last_error ?? undefined);
      assert.ok((await latest('scoutkill')).equals(staged), 'the Station holds exactly the staged archive');
      assert.deepEqual(readdirSync(staging()), []);
    });

    test('SIGKILL of the Station mid-upload: the Scout resumes once it is back; exactly the staged bytes are stored', async () => {
      const data = job('stationkill', 40);
      const held = proxy.holdAfter(3 * MIB);
      assert.equal((await scoutAdmin.post('/api/run-now')).body.status, 'queued');
      await held;
      await uploading('stationkill');
      const staged = stagedArchive('stationkill');
      const killedAt = scout.output().length;
      await station.kill();
      proxy.release();
      station = await station.restart();
      // The Station is back: the Scout's wait to retry (logged since the kill) is passed.
      await passingUploadWaits(scout, () => waitIdle(scoutAdmin, LONG), killedAt);
      // The Scout retries for a few seconds; a Station slower to come back gets the next cycle.
      if ((await jobState(scoutAdmin, 'stationkill')).last_status !== 'uploaded')
        await runNow(scoutAdmin, LONG);
      const state = await jobState(scoutAdmin, 'stationkill');
      assert.equal(state.last_status, 'uploaded', state.last_error ?? undefined);
      const stored = await latest('stationkill');
      assert.ok(stored.equals(staged), 'the Station holds exactly the staged archive');
      const out = await unpack('stationkill', stored);
      assert.ok(readFileSync(join(out, 'noise.bin')).equals(data));
    });

    test('a Station that refuses streamed (400, an older release) gets the archive once staged', async () => {
      const older = await startUploadProxy(station.url);
      older.refuseStreamed = true;
      try {
        await saveStationSettings(scoutAdmin, older.url, credential, 'streamed-host');
        const data = job('older', 3);
        await runNow(scoutAdmin, LONG);
        const state = await jobState(scoutAdmin, 'older');
        assert.equal(state.last_status, 'uploaded', state.last_error ?? undefined);
        assert.deepEqual(
          older.initiations.map((m) => m.streamed === true && m.archive_size_bytes === undefined),
          [true, false],
          'refused as streamed, then sent as a plain upload',
        );
        const out = await unpack('older', await latest('older'));
        assert.ok(readFileSync(join(out, 'noise.bin')).equals(data));
      } finally {
        await saveStationSettings(scoutAdmin, proxy.url, credential, 'streamed-host');
        await older.close();
      }
    });
  });
}

streamedUploadE2e('upload while archiving (disk)', async () => ({}));

onCeph('upload while archiving (S3, Ceph)', (ceph) => {
  streamedUploadE2e('upload while archiving (S3, Ceph)', async () => (await ceph()).env('streamed-e2e'));
});
