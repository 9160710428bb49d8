// The Scout's backup cycle as a service, against an injected Station client (no Station
// process): a fake that keeps upload sessions and answers like the /backup/uploads protocol
// (src/shared/protocol/uploads.ts) — offset_mismatch with the offset to resume at,
// checksum_mismatch after which the staged bytes are gone, 5xx and 429 to retry, refusals
// with their codes. Real archives, real key store, real job state in node:sqlite.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, type TestContext, test } from 'node:test';
import { clock } from '../../src/core/clock.ts';
import { type Hooks, NOT_RUN } from '../../src/core/hooks/hooks.ts';
import type { Notifier, NotifyEvent } from '../../src/core/notify/ntfy.ts';
import { writeArchive } from '../../src/scout/archive/pipeline.ts';
import { SMALL_FILES, startScan } from '../../src/scout/backup/scan.ts';
import { openScoutStorage, type ScoutStorage } from '../../src/scout/db/open.ts';
import type { DiscoveredJob } from '../../src/scout/jobs/discovery.ts';
import type { EntryOutcome, WalkEntry } from '../../src/scout/jobs/walk.ts';
import { createKeyStore } from '../../src/scout/keys/key-store.ts';
import { type Backup, createBackup } from '../../src/scout/schedule/backup.ts';
import type { OperationContext } from '../../src/scout/schedule/runner.ts';
import type { ScoutSettingsService } from '../../src/scout/services/scout-settings.ts';
import { createJobStates, type JobStates, stateView } from '../../src/scout/state/job-states.ts';
import { type Circuit, createCircuit, OPEN_AFTER_FAILED_CYCLES } from '../../src/scout/upload/circuit.ts';
import { type StationClient, StationError } from '../../src/scout/upload/station-client.ts';
import type { ErrorCode } from '../../src/shared/protocol/error-codes.ts';
import type { FinalizeRequest, InitiateReply, InitiateRequest } from '../../src/shared/protocol/uploads.ts';
import { sha256 } from '../helpers/hashes.ts';

const CHUNK = 64 * 1024;

interface Session {
  id: string;
  meta: InitiateRequest;
  bytes: Buffer;
  stored: string | null;
  /** What finalize of a streamed upload declared. */
  declared?: FinalizeRequest;
}

/** `length` bytes of a chunk's file from `offset`: a path, or the handle of a growing archive. */
function readRange(file: string | FileHandle, offset: number, length: number): Buffer {
  const fd = typeof file === 'string' ? openSync(file, 'r') : file.fd;
  try {
    const bytes = Buffer.alloc(length);
    return bytes.subarray(0, readSync(fd, bytes, 0, length, offset));
  } finally {
    if (typeof file === 'string') closeSync(fd);
  }
}

type Method = 'initiate' | 'chunk' | 'finalize';
/** A one-time fault: returns the error to answer with (or nothing to answer normally). */
type Fault = (
  session: Session | undefined,
  offset: number,
  file: string | FileHandle,
) => StationError | undefined;

const refusal = (status: number, code: ErrorCode, detail: unknown, retryAfter: number | null = null) =>
  new StationError(
    status,
    detail,
    retryAfter,
    typeof detail === 'string' ? detail : JSON.stringify(detail),
    code,
  );

/** A Station that holds upload sessions in memory and answers as the protocol says. */
class FakeStation {
  readonly calls: string[] = [];
  readonly sessions = new Map<string, Session>();
  readonly faults: Record<Method, Fault[]> = { initiate: [], chunk: [], finalize: [] };
  /** Every call fails as if the Station were gone. */
  unreachable = false;
  /** The next chunk arrives with its first byte damaged (the finalize check finds it). */
  damageNextChunk = false;
  /** Every initiation's body, in order. */
  readonly initiations: InitiateRequest[] = [];
  /** Chunks read from an open handle (a growing archive), not a path. */
  chunksFromHandle = 0;

  readonly baseUrl: string;
  /** false: an older release, to which a streamed initiation is a 400 (archive_size_bytes missing). */
  readonly knowsStreamed: boolean;

  constructor(baseUrl = 'http://fake', knowsStreamed = true) {
    this.baseUrl = baseUrl;
    this.knowsStreamed = knowsStreamed;
  }

  private fault(
    method: Method,
    session: Session | undefined,
    offset = 0,
    file: string | FileHandle = '',
  ): void {
    if (this.unreachable)
      throw new StationError(0, null, null, 'cannot reach the Station at http://fake: ECONNREFUSED');
    const error = this.faults[method].shift()?.(session, offset, file);
    if (error) throw error;
  }

  private byId(id: string): Session {
    const session = [...this.sessions.values()].find((s) => s.id === id);
    if (!session) throw refusal(404, 'not_found', `no upload session ${id}`);
    return session;
  }

  readonly client = ((): StationClient => {
    const station = this;
    const fake = {
      baseUrl: station.baseUrl,
      async initiate(meta: InitiateRequest, signal?: AbortSignal): Promise<InitiateReply> {
        signal?.throwIfAborted();
        station.calls.push('initiate');
        station.initiations.push(meta);
        let session = station.sessions.get(meta.idempotency_key);
        station.fault('initiate', session);
        if (meta.archive_size_bytes === undefined && !station.knowsStreamed)
          throw refusal(400, 'bad_request', 'archive_size_bytes: archive_size_bytes must be a whole number');
        if (!session) {
          session = { id: `up-${station.sessions.size + 1}`, meta, bytes: Buffer.alloc(0), stored: null };
          station.sessions.set(meta.idempotency_key, session);
        }
        const stored = session.stored;
        return {
          upload_id: session.id,
          status: stored
            ? 'stored'
            : session.bytes.length === meta.archive_size_bytes
              ? 'complete'
              : 'receiving',
          next_offset: session.bytes.length,
          archive_size_bytes: meta.archive_size_bytes ?? null,
          recommended_chunk_size_bytes: CHUNK,
          duplicate: false,
          ...(stored ? { stored_as: stored } : {}),
          pruned: [],
        };
      },
      async chunk(
        uploadId: string,
        file: string | FileHandle,
        offset: number,
        length: number,
        signal?: AbortSignal,
      ) {
        signal?.throwIfAborted();
        station.calls.push(`chunk@${offset}`);
        if (typeof file !== 'string') station.chunksFromHandle += 1;
        const session = station.byId(uploadId);
        station.fault('chunk', session, offset, file);
        if (offset !== session.bytes.length) {
          throw refusal(409, 'offset_mismatch', {
            status: 'offset_mismatch',
            next_offset: session.bytes.length,
            message: `expected offset ${session.bytes.length}`,
          });
        }
        const bytes = readRange(file, offset, length);
        if (station.damageNextChunk && bytes.length > 0) {
          station.damageNextChunk = false;
          bytes[0] = (bytes[0] ?? 0) ^ 0xff;
        }
        session.bytes = Buffer.concat([session.bytes, bytes]);
        const complete = session.bytes.length === session.meta.archive_size_bytes;
        return {
          status: complete ? ('complete' as const) : ('receiving' as const),
          next_offset: session.bytes.length,
        };
      },
      async finalize(uploadId: string, body?: FinalizeRequest, signal?: AbortSignal) {
        signal?.throwIfAborted();
        station.calls.push('finalize');
        const session = station.byId(uploadId);
        station.fault('finalize', session);
        if (session.meta.streamed) {
          assert.ok(
            body?.archive_size_bytes && body.archive_sha256,
            'a streamed upload declares at finalize',
          );
          session.declared = body;
          session.meta = { ...session.meta, ...body };
        }
        if (session.bytes.length !== session.meta.archive_size_bytes) {
          throw refusal(409, 'incomplete', {
            status: 'incomplete',
            next_offset: session.bytes.length,
            message: 'incomplete',
          });
        }
        if (sha256(session.bytes) !== session.meta.archive_sha256) {
          session.bytes = Buffer.alloc(0);
          throw refusal(409, 'checksum_mismatch', {
            status: 'checksum_mismatch',
            next_offset: 0,
            message: 'the received bytes do not match archive_sha256',
          });
        }
        session.stored = `${session.meta.job_name}__${session.meta.timestamp.replaceAll(':', '-')}__${session.meta.fingerprint.slice(0, 8)}.tar.zst`;
        return { status: 'stored' as const, stored_as: session.stored, pruned: [], duplicate: false };
      },
      instance() {
        throw new Error('the backup cycle does not recover');
      },
    };
    return fake as unknown as StationClient;
  })();

  /** The sessions that ended stored, with their bytes. */
  stored(): Session[] {
    return [...this.sessions.values()].filter((s) => s.stored !== null);
  }
}

let work: string;
let storage: ScoutStorage;
let states: JobStates;
let station: FakeStation;
let circuit: Circuit;
let backup: Backup;
let events: NotifyEvent[];
let job: DiscoveredJob;

const ctx = (): OperationContext => ({ signal: new AbortController().signal, progress: () => {} });

/** The upload retries' waits on the clock (ms) for the rest of the test, each passed at once. */
function retryWaits(t: TestContext): number[] {
  const waits: number[] = [];
  t.mock.method(clock, 'sleep', async (ms: number) => {
    waits.push(ms);
  });
  return waits;
}
const state = async () => stateView(await states.get('docs'));
/** A new file, so the cycle makes a new archive. */
const change = () =>
  writeFileSync(join(job.absolute_path, `${randomBytes(4).toString('hex')}.bin`), randomBytes(200_000));

describe('the backup cycle against a Station client that answers like the protocol', () => {
  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'backup-cycle-'));
    storage = await openScoutStorage(join(work, 'data'));
    states = createJobStates(storage.scoutDb);
    const docs = join(work, 'scan', 'docs');
    job = {
      relative_path: 'docs',
      absolute_path: docs,
      config: { job_name: 'docs', include_hidden: true, follow_symlinks: false, exclude: [] },
      config_error: null,
    };
    mkdirSync(docs, { recursive: true });
    writeFileSync(join(docs, 'big.bin'), randomBytes(300_000));
  });

  after(async () => {
    await storage?.close();
    rmSync(work, { recursive: true, force: true });
  });

  /** The cycle under test, against `station`; `archiver` wraps the archive pipeline. */
  function backupWith(archiver?: typeof writeArchive): Backup {
    const noHook = async () => NOT_RUN;
    return createBackup({
      dataDir: join(work, 'data'),
      instanceId: 'inst0000000000000001',
      advertisedUrl: undefined,
      keys: createKeyStore(join(work, 'data')),
      settings: {
        read: async () => ({
          station_url: 'http://fake',
          scout_id: 'host-a',
          scout_credential: 'station-token',
          cron_schedule: '0 * * * *',
          drill_schedule: '',
        }),
      } as unknown as ScoutSettingsService,
      states,
      circuit,
      uploadsPaused: async () => false,
      jobs: async () => [job],
      hooks: { pre: noHook, post: noHook } as unknown as Hooks,
      notifier: { notify: (event: NotifyEvent) => events.push(event) } as unknown as Notifier,
      stationClient: () => station.client,
      ...(archiver ? { archiver } : {}),
    });
  }

  beforeEach(() => {
    station = new FakeStation();
    circuit = createCircuit();
    events = [];
    backup = backupWith();
  });

  /** The staged archive of the job, before the upload removes it. */
  async function stagedFile(): Promise<string | null> {
    return states.staged(await states.get('docs'))?.file ?? null;
  }

  test('a plain upload: initiate, chunks in order, finalize; the staged archive is removed', async () => {
    change();
    await backup.cycle('run_now', ctx());
    const s = await state();
    assert.equal(s.last_status, 'uploaded', s.last_error ?? undefined);
    assert.equal(s.last_error_code, null);
    const [stored] = station.stored();
    assert.ok(stored);
    assert.equal(s.last_stored_as, stored.stored);
    assert.equal(sha256(stored.bytes), stored.meta.archive_sha256);
    assert.equal(station.calls[0], 'initiate');
    assert.equal(station.calls.at(-1), 'finalize');
    assert.equal(s.staged, false);
  });

  test('offset_mismatch: the upload resumes at the offset the Station names, sending each byte once', async () => {
    change();
    // The Station already holds bytes the Scout does not know of (an earlier request arrived late).
    station.faults.chunk.push((session, _offset, file) => {
      if (session) session.bytes = readRange(file, 0, CHUNK * 2);
      return undefined;
    });
    await backup.forceSend(job, ctx());
    const s = await state();
    assert.equal(s.last_status, 'uploaded', s.last_error ?? undefined);
    const [stored] = station.stored();
    assert.ok(stored);
    assert.equal(sha256(stored.bytes), stored.meta.archive_sha256);
    const chunks = station.calls.filter((c) => c.startsWith('chunk@'));
    assert.deepEqual(chunks.slice(0, 2), ['chunk@0', `chunk@${CHUNK * 2}`], 'resumed where the Station said');
    assert.equal(station.calls.filter((c) => c === 'initiate').length, 1, 'no new initiation for a resume');
  });

  test('checksum_mismatch: the Station discards the bytes and the Scout sends the archive again from 0', async () => {
    change();
    station.damageNextChunk = true;
    await backup.forceSend(job, ctx());
    const s = await state();
    assert.equal(s.last_status, 'uploaded', s.last_error ?? undefined);
    const initiations = station.calls.filter((c) => c === 'initiate').length;
    assert.equal(initiations, 2, 'initiated again after the mismatch');
    const fromZero = station.calls.filter((c) => c === 'chunk@0').length;
    assert.equal(fromZero, 2, 'sent from offset 0 twice');
    assert.deepEqual(
      station.calls.filter((c) => c === 'finalize').length,
      2,
      'the first finalize found the mismatch, the second stored',
    );
    const [stored] = station.stored();
    assert.ok(stored);
    assert.equal(sha256(stored.bytes), stored.meta.archive_sha256);
  });

  test('a 500 and a 429 (Retry-After) are retried within the cycle; the upload resumes, nothing is sent twice', async (t) => {
    const waits = retryWaits(t);
    change();
    station.faults.chunk.push(
      () => undefined,
      () => refusal(500, 'internal', 'internal server error'),
    );
    station.faults.finalize.push(() => refusal(429, 'rate_limited', 'slow down', 1));
    await backup.forceSend(job, ctx());
    const s = await state();
    assert.equal(s.last_status, 'uploaded', s.last_error ?? undefined);
    assert.deepEqual(waits, [1000, 1000], 'waited 1 s after the 500 and Retry-After 1 s after the 429');
    const [stored] = station.stored();
    assert.ok(stored);
    assert.equal(sha256(stored.bytes), stored.meta.archive_sha256);
    assert.equal(station.calls.filter((c) => c === 'initiate').length, 3, 'each retry asks where to resume');
    const sent = station.calls.filter((c) => c.startsWith('chunk@'));
    assert.equal(new Set(sent).size, sent.length - 1, 'only the chunk the 500 refused was sent again');
  });

  test('a rejected token fails the job with code token_rejected, keeps the archive and asks for attention', async () => {
    change();
    station.faults.initiate.push(() =>
      refusal(401, 'token_rejected', 'Station token expired; mint a new one'),
    );
    await backup.cycle('run_now', ctx());
    const s = await state();
    assert.equal(s.last_status, 'failed');
    assert.equal(s.last_error_code, 'token_rejected');
    assert.match(String(s.last_error), /scout_credential/);
    assert.equal(s.staged, true);
    const staged = await stagedFile();
    assert.ok(staged && existsSync(staged));
    assert.equal(events.at(-1)?.event, 'job_needs_attention');
    assert.equal(circuit.view().consecutive_failures, 0, 'the Station was reached');
  });

  test('the Station paused: code uploads_paused; the next cycle uploads the same staged archive', async () => {
    const staged = await stagedFile();
    station.faults.initiate.push(() => refusal(503, 'uploads_paused', 'uploads are paused on this Station'));
    await backup.cycle('run_now', ctx());
    let s = await state();
    assert.equal(s.last_status, 'failed');
    assert.equal(s.last_error_code, 'uploads_paused');
    assert.match(String(s.last_error), /stays staged/);
    assert.equal(await stagedFile(), staged, 'the same archive waits');
    await backup.cycle('run_now', ctx());
    s = await state();
    assert.equal(s.last_status, 'uploaded', s.last_error ?? undefined);
    assert.equal(s.last_error_code, null);
    assert.ok(staged && !existsSync(staged), 'the uploaded archive is removed');
  });

  test('an unreachable Station: code station_unreachable each cycle; the circuit opens after 3', async (t) => {
    const waits = retryWaits(t);
    change();
    station.unreachable = true;
    for (let cycle = 1; cycle <= OPEN_AFTER_FAILED_CYCLES; cycle += 1) {
      // Each cycle tries 4 times (waits of 1, 2 and 4 s), then fails the job.
      waits.length = 0;
      await backup.cycle('run_now', ctx());
      assert.deepEqual(waits, [1000, 2000, 4000], `the waits of cycle ${cycle}`);
      const s = await state();
      assert.equal(s.last_status, 'failed');
      assert.equal(s.last_error_code, 'station_unreachable');
      assert.match(String(s.last_error), /cannot reach the Station/);
    }
    assert.equal(circuit.view().state, 'open');
    await backup.cycle('schedule', ctx());
    assert.equal(
      (await state()).last_error_code,
      'station_unreachable',
      'a scheduled cycle skips the upload',
    );
    assert.equal(station.calls.filter((c) => c === 'initiate').length, OPEN_AFTER_FAILED_CYCLES * 4);
  });

  test('a streamed upload: initiated without size and checksum, chunks read from the growing archive, both given at finalize', async () => {
    change();
    await backup.cycle('run_now', ctx());
    const s = await state();
    assert.equal(s.last_status, 'uploaded', s.last_error ?? undefined);
    const [first] = station.initiations;
    assert.equal(first?.streamed, true);
    assert.equal(first?.archive_size_bytes, undefined);
    assert.equal(first?.archive_sha256, undefined);
    const [stored] = station.stored();
    assert.ok(stored?.declared);
    assert.equal(stored.declared.archive_size_bytes, stored.bytes.length);
    assert.equal(stored.declared.archive_sha256, sha256(stored.bytes));
    assert.ok(station.chunksFromHandle > 0, 'chunks were read from the archive the pipeline was writing');
    assert.deepEqual(readdirSync(join(work, 'data', 'staging')), [], 'nothing left in staging');
  });

  test('cancelled while the streamed upload runs: no finalize, nothing staged, the job is cancelled', async () => {
    change();
    // 48 MiB zstd cannot shrink: far more than the pipeline holds in flight, so chunks go out
    // while the archive is still read.
    writeFileSync(join(job.absolute_path, 'cancel.bin'), randomBytes(48 * 1024 * 1024));
    const controller = new AbortController();
    let phase = '';
    let cancelledWhile = '';
    // The operator cancels during the archive, once a chunk of it has gone to the Station.
    const progress = (patch: { phase?: string }) => {
      phase = patch.phase ?? phase;
      const sent = station.calls.some((c) => c.startsWith('chunk@'));
      if (phase === 'archiving' && sent && !controller.signal.aborted) {
        cancelledWhile = phase;
        controller.abort(new Error('cancelled by the operator'));
      }
    };
    await assert.rejects(backup.cycle('run_now', { signal: controller.signal, progress }));
    assert.equal(cancelledWhile, 'archiving');
    const s = await state();
    assert.equal(s.last_status, 'cancelled');
    assert.equal(s.staged, false);
    assert.equal(station.calls.includes('finalize'), false);
    assert.equal(station.stored().length, 0);
    assert.deepEqual(readdirSync(join(work, 'data', 'staging')), [], 'no archive and no .part left');
    rmSync(join(job.absolute_path, 'cancel.bin'));
  });

  test('cancelled once the walk is done, while the archive is still written: no archive is staged, the job is cancelled', async () => {
    change();
    await backup.cycle('run_now', ctx());
    assert.equal((await state()).last_status, 'uploaded');
    change();
    station = new FakeStation(); // the cycle's client comes from `station`
    const controller = new AbortController();
    let entries = 0;
    // A scheduled cycle walks a job stored before, then archives it; the operator cancels as soon as the
    // archive's own walk has handed over its last entry, while the frames are still compressed,
    // sealed and written (the archive once completed regardless and was kept staged).
    let archived: Promise<string> = Promise.resolve('never started');
    const cancelAfterWalk: typeof writeArchive = (options) => {
      const made = writeArchive({
        ...options,
        entries: (async function* () {
          const walk = options.entries as AsyncGenerator<WalkEntry, void, EntryOutcome | undefined>;
          for (let step = await walk.next(); !step.done; entries += 1)
            step = await walk.next(yield step.value);
          controller.abort(new Error('cancelled by the operator'));
        })(),
      });
      archived = made.then(
        () => 'completed',
        (error: Error) => `stopped: ${error.message}`,
      );
      return made;
    };
    await assert.rejects(
      backupWith(cancelAfterWalk).cycle('schedule', { signal: controller.signal, progress: () => {} }),
      /cancelled by the operator/,
    );
    assert.ok(entries > 1, 'the archive read the whole job');
    assert.equal(
      await archived,
      'stopped: cancelled by the operator',
      'the archive did not go on to its end',
    );
    const s = await state();
    assert.equal(s.last_status, 'cancelled');
    assert.equal(s.staged, false);
    assert.deepEqual(readdirSync(join(work, 'data', 'staging')), [], 'no archive and no .part left');
    assert.equal(station.calls.includes('finalize'), false);
    assert.equal(station.stored().length, 0);
  });

  test('run-now of a job that did not change: the archive begun beside the walk is dropped, nothing goes to the Station', async () => {
    change();
    await backup.cycle('run_now', ctx());
    const first = await state();
    assert.equal(first.last_status, 'uploaded', first.last_error ?? undefined);
    const [announced] = station.initiations;
    const stored = station.stored()[0];
    assert.equal(announced?.fingerprint, stored?.meta.fingerprint, "announced with the walk's fingerprint");
    station.calls.length = 0;
    // 16 MiB zstd cannot shrink: the archive is still being written when the walk is done.
    writeFileSync(join(job.absolute_path, 'unchanged.bin'), randomBytes(16 * 1024 * 1024));
    try {
      await backup.cycle('run_now', ctx());
      assert.equal((await state()).last_status, 'uploaded');
      station.calls.length = 0;
      for (const trigger of ['run_now', 'schedule'] as const) {
        await backup.cycle(trigger, ctx());
        const s = await state();
        assert.equal(s.last_status, 'unchanged', `${trigger}: ${s.last_error ?? ''}`);
        assert.equal(s.last_stored_as, station.stored().at(-1)?.stored);
        assert.deepEqual(station.calls, [], `${trigger}: nothing initiated or sent`);
        assert.equal(s.staged, false);
        assert.deepEqual(readdirSync(join(work, 'data', 'staging')), [], 'no archive and no .part left');
      }
    } finally {
      rmSync(join(job.absolute_path, 'unchanged.bin'));
    }
  });

  test('a file that appears while the job is archived is not missed: the archive goes up with its own fingerprint', async () => {
    // The archive reads `a-slow` (16 MiB zstd cannot shrink) long after the walk is done; the file
    // appears in `z-late` once the walk is done (when the streamed upload is initiated), before
    // the archive's own walk gets there.
    mkdirSync(join(job.absolute_path, 'a-slow'));
    writeFileSync(join(job.absolute_path, 'a-slow', 'noise.bin'), randomBytes(16 * 1024 * 1024));
    mkdirSync(join(job.absolute_path, 'z-late'));
    writeFileSync(join(job.absolute_path, 'z-late', 'old.txt'), 'old');
    try {
      station.faults.initiate.push(() => {
        writeFileSync(join(job.absolute_path, 'z-late', 'new.txt'), 'appeared during the backup');
        return undefined;
      });
      await backup.cycle('run_now', ctx());
      const s = await state();
      assert.equal(s.last_status, 'uploaded', s.last_error ?? undefined);
      const [streamed, plain] = station.initiations;
      assert.equal(streamed?.streamed, true);
      assert.equal(plain?.streamed, undefined, 'the announced upload was abandoned for a plain one');
      assert.notEqual(plain?.fingerprint, streamed?.fingerprint);
      const [stored] = station.stored();
      assert.equal(stored?.meta.idempotency_key, plain?.idempotency_key);
      assert.equal(sha256(stored?.bytes ?? Buffer.alloc(0)), stored?.meta.archive_sha256);
      // What is stored is the job as it is now: a scheduled cycle finds nothing to do.
      station.calls.length = 0;
      await backup.cycle('schedule', ctx());
      assert.equal((await state()).last_status, 'unchanged');
      assert.deepEqual(station.calls, []);
    } finally {
      rmSync(join(job.absolute_path, 'a-slow'), { recursive: true });
      rmSync(join(job.absolute_path, 'z-late'), { recursive: true });
    }
  });

  test('a streamed upload the Station finds too large (413): the staged archive goes up with its size declared', async () => {
    change();
    station.faults.chunk.push((session) =>
      session?.meta.streamed
        ? refusal(413, 'payload_too_large', 'the archive outgrows 10000 parts')
        : undefined,
    );
    await backup.cycle('run_now', ctx());
    const s = await state();
    assert.equal(s.last_status, 'uploaded', s.last_error ?? undefined);
    const [streamed, plain] = station.initiations;
    assert.equal(streamed?.streamed, true);
    assert.equal(plain?.archive_size_bytes !== undefined && plain.streamed !== true, true);
    assert.equal(plain?.idempotency_key, `${streamed?.idempotency_key}-plain`);
    const [stored] = station.stored();
    assert.ok(stored);
    assert.equal(stored.meta.archive_sha256, sha256(stored.bytes));
  });

  test('a Station that refuses streamed (400, an older release) gets the staged archive as a plain upload', async () => {
    station = new FakeStation('http://older-station', false); // the cycle's client comes from `station`
    change();
    await backup.cycle('run_now', ctx());
    const s = await state();
    assert.equal(s.last_status, 'uploaded', s.last_error ?? undefined);
    assert.deepEqual(
      station.initiations.map((m) => m.streamed === true),
      [true, false],
      'one streamed initiation refused, then a plain one',
    );
    const [stored] = station.stored();
    assert.ok(stored);
    assert.equal(stored.meta.archive_sha256, sha256(stored.bytes));
    change();
    await backup.cycle('run_now', ctx());
    assert.equal((await state()).last_status, 'uploaded');
    assert.deepEqual(
      station.initiations.map((m) => m.streamed === true),
      [true, false, false],
      'a Station known to refuse is not asked again',
    );
  });

  test('a forced backup of a job of many small files walks it once: it goes up once archived, declaring its own fingerprint (issue #27)', async () => {
    const many = join(job.absolute_path, 'many');
    // SMALL_FILES.files files of a few bytes each: the scan's walk stops at the last of them.
    for (let i = 0; i < SMALL_FILES.files; i += 1) {
      const folder = join(many, `d${Math.floor(i / 1000)}`);
      if (i % 1000 === 0) mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, `f${i}.txt`), `file ${i}\n`);
    }
    try {
      const stop = new AbortController();
      const once = startScan(job, stop.signal, { wanted: true });
      const whole = startScan(job, stop.signal);
      const [early, seen] = [await once.seen, await whole.seen];
      once.done();
      whole.done();
      assert.equal(early.fingerprint, null, 'a scan whose archive is wanted anyway stops early');
      assert.match(seen.fingerprint ?? '', /^[0-9a-f]{64}$/);
      // Walked only in part, the job's fingerprint is not yet known: a scan for a cycle that
      // may find the job unchanged walks it whole.
      await backup.cycle('force_send', ctx());
      const s = await state();
      assert.equal(s.last_status, 'uploaded', s.last_error ?? undefined);
      assert.deepEqual(
        station.initiations.map((m) => [m.streamed === true, m.fingerprint]),
        [[false, seen.fingerprint]],
        "no streamed upload: one plain upload of the staged archive, with the job's fingerprint",
      );
      const [stored] = station.stored();
      assert.equal(stored?.meta.archive_sha256, sha256(stored?.bytes ?? Buffer.alloc(0)));
      assert.deepEqual(readdirSync(join(work, 'data', 'staging')), [], 'nothing left in staging');
      // What is stored is the job as it is: a scheduled cycle finds nothing to do.
      station.calls.length = 0;
      await backup.cycle('schedule', ctx());
      assert.equal((await state()).last_status, 'unchanged');
      assert.deepEqual(station.calls, []);
    } finally {
      rmSync(many, { recursive: true, force: true });
    }
  });
});
