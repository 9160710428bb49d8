// The Scout's jobs and files API: the job list with each job's marker configuration and local
// state, folder children, browsing with exclusion information, folder sizes, saving,
// rewriting and deleting jobs, adding exclusions, path-escape refusals and access rules.
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { expectStatus } from '../helpers/assertions.ts';
import { buildTree } from '../helpers/files.ts';
import { ADMIN_PASSWORD, Client, mintAutomationToken } from '../helpers/http.ts';
import { runNow, stagedFiles, startScout } from '../helpers/scout.ts';
import type { TestServer } from '../helpers/server.ts';

let scout: TestServer;
let admin: Client;
let scanRoot: string;
let readToken: string;
let backupToken: string;
const outside = mkdtempSync(join(tmpdir(), 'backupd-outside-'));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const NOHIDDEN_MARKER = 'include_hidden: false\nexclude:\n  - "*.log"\n  - cache/\n';
const NOHIDDEN_FILES: Record<string, string> = {
  'nohidden/.upload_dir': NOHIDDEN_MARKER,
  'nohidden/.secret': 'hidden bytes',
  'nohidden/app.log': 'log line\n',
  'nohidden/cache/c.bin': 'cached!',
  'nohidden/keep.txt': 'keep me',
  'nohidden/sub/deep.txt': 'deep',
};

interface JobView {
  relative_path: string;
  config: { job_name: string; include_hidden: boolean; follow_symlinks: boolean; exclude: string[] } | null;
  config_error: string | null;
  state: Record<string, unknown>;
}
interface Listing {
  discovering: boolean;
  directories: JobView[];
}
interface Child {
  name: string;
  relative_path: string;
  is_job: boolean;
}
interface Entry {
  name: string;
  relative_path: string;
  excluded: boolean;
  exclusion_reason: string | null;
}

/** Browse entries by name. */
async function browse(relativePath: string): Promise<Map<string, Entry>> {
  const reply = await admin.get<{ entries: Entry[] }>(
    `/api/directories/browse?relative_path=${encodeURIComponent(relativePath)}`,
  );
  expectStatus(reply, 200);
  return new Map(reply.body.entries.map((e) => [e.name, e]));
}

function entry(entries: Map<string, Entry>, name: string): Entry {
  const found = entries.get(name);
  assert.ok(found, `${name} is listed`);
  return found;
}

async function list(): Promise<Listing> {
  const reply = await admin.get<Listing>('/api/directories');
  expectStatus(reply, 200);
  return reply.body;
}

async function job(relativePath: string): Promise<JobView | undefined> {
  return (await list()).directories.find((d) => d.relative_path === relativePath);
}

before(async () => {
  ({ server: scout, admin, scanRoot } = await startScout({ fill }));
  readToken = await mintAutomationToken(admin, ['read']);
  backupToken = await mintAutomationToken(admin, ['backup']);
  for (let i = 0; i < 2400 && (await list()).discovering; i += 1) await sleep(25);
});

/** The scan root: jobs good and bad, plain folders, and a symlink to a job outside it. */
function fill(scan: string): void {
  buildTree(scan, {
    'docs/.upload_dir': '',
    'docs/a.txt': 'alpha',
    'docs/.hidden': 'dot',
    'docs/sub/b.txt': 'bravo!',
    'docs/nested/n.txt': 'nested',
    'bad/.upload_dir': 'include_hidden: yes\n',
    'bad/file.txt': 'x',
    'dup1/.upload_dir': 'job_name: same\n',
    'dup2/.upload_dir': 'job_name: same\n',
    ...NOHIDDEN_FILES,
    'plain/file.txt': 'plain',
    'plain/deeper/d.txt': 'd',
    'plain/other/': '',
    'plain2/': '',
    'tmpjob/t.txt': 'temporary',
  });
  // A folder outside the scan root that looks like a job, reachable only through a symlink.
  writeFileSync(join(outside, '.upload_dir'), '');
  writeFileSync(join(outside, 'secret.txt'), 'outside the scan root');
  mkdirSync(join(outside, 'inner'));
  symlinkSync(outside, join(scan, 'escape'));
}

after(async () => {
  await scout?.dispose();
  rmSync(outside, { recursive: true, force: true });
});

describe('job list', () => {
  test('lists jobs with relative_path, config, config_error and a never-run state', async () => {
    const body = await list();
    assert.equal(body.discovering, false, 'the first search has ended');
    assert.ok(Array.isArray(body.directories));
    const docs = body.directories.find((d) => d.relative_path === 'docs');
    assert.ok(docs, 'docs is listed');
    assert.deepEqual(docs.config, {
      job_name: 'docs',
      include_hidden: true,
      follow_symlinks: false,
      exclude: [],
      change_detection: 'sizes',
    });
    assert.equal(docs.config_error, null);
    assert.equal(docs.state.last_status, 'never_run');
    assert.equal(docs.state.last_error, null);
    assert.equal(docs.state.staged, false);
    assert.equal(docs.state.last_attempt_at, null);
    assert.equal(docs.state.last_success_at, null);
    assert.equal(docs.state.last_stored_as, null);
    const nohidden = body.directories.find((d) => d.relative_path === 'nohidden');
    assert.deepEqual(nohidden?.config, {
      job_name: 'nohidden',
      include_hidden: false,
      follow_symlinks: false,
      exclude: ['*.log', 'cache/'],
      change_detection: 'sizes',
    });
    const paths = body.directories.map((d) => d.relative_path);
    assert.ok(!paths.includes('plain'), 'a folder without a marker is not a job');
    assert.ok(!paths.includes('docs/nested'), 'folders inside a job are not jobs');
  });

  test('a marker that does not parse shows config_error and config null', async () => {
    const bad = await job('bad');
    assert.ok(bad, 'the job with a bad marker is still listed');
    assert.equal(bad.config, null);
    assert.match(String(bad.config_error), /^\.upload_dir: /);
    assert.match(String(bad.config_error), /include_hidden must be true or false/);
    assert.equal(bad.state.last_status, 'never_run');
  });

  test('two jobs with the same job_name are both flagged, each naming the other', async () => {
    const first = await job('dup1');
    const second = await job('dup2');
    assert.equal(first?.config, null);
    assert.match(String(first?.config_error), /job name "same" is already used by dup2/);
    assert.equal(second?.config, null);
    assert.match(String(second?.config_error), /job name "same" is already used by dup1/);
  });

  test('a job outside the scan root behind a symlink is never listed', async () => {
    const paths = (await list()).directories.map((d) => d.relative_path);
    assert.ok(!paths.some((p) => p === 'escape' || p.startsWith('escape/')), paths.join(', '));
  });
});

describe('children, browse and size', () => {
  test('children lists the folders under a path and marks jobs', async () => {
    const root = await admin.get<{ relative_path: string; directories: Child[] }>(
      '/api/directories/children?relative_path=.',
    );
    expectStatus(root, 200);
    assert.equal(root.body.relative_path, '.');
    const byPath = new Map(root.body.directories.map((d) => [d.relative_path, d]));
    assert.deepEqual(byPath.get('docs'), { name: 'docs', relative_path: 'docs', is_job: true });
    assert.deepEqual(byPath.get('plain'), { name: 'plain', relative_path: 'plain', is_job: false });
    assert.equal(byPath.get('bad')?.is_job, true);
    const plain = await admin.get('/api/directories/children?relative_path=plain');
    expectStatus(plain, 200);
    assert.deepEqual(plain.body.directories, [
      { name: 'deeper', relative_path: 'plain/deeper', is_job: false },
      { name: 'other', relative_path: 'plain/other', is_job: false },
    ]);
    const empty = await admin.get('/api/directories/children?relative_path=plain/other');
    expectStatus(empty, 200);
    assert.deepEqual(empty.body.directories, []);
  });

  test('children of a missing folder is 404; a missing relative_path is 400', async () => {
    expectStatus(await admin.get('/api/directories/children?relative_path=nope'), 404, /nope/);
    expectStatus(await admin.get('/api/directories/children'), 400, /relative_path/);
    expectStatus(await admin.get('/api/directories/browse'), 400, /relative_path/);
    expectStatus(await admin.get('/api/directories/size'), 400, /relative_path/);
  });

  test('browse shows excluded entries with the reason: marker, hidden and patterns', async () => {
    const entries = await browse('nohidden');
    const reason = (name: string) => {
      const found = entry(entries, name);
      assert.equal(typeof found.excluded, 'boolean');
      assert.equal(found.excluded, found.exclusion_reason !== null, name);
      return found.exclusion_reason;
    };
    assert.equal(reason('.upload_dir'), 'marker');
    assert.equal(reason('.secret'), 'hidden');
    assert.equal(reason('app.log'), '*.log');
    assert.equal(reason('cache'), 'cache/');
    assert.equal(reason('keep.txt'), null);
    assert.equal(reason('sub'), null);
    assert.equal(entry(entries, 'keep.txt').relative_path, 'nohidden/keep.txt');
    const cache = await browse('nohidden/cache');
    assert.equal(entry(cache, 'c.bin').excluded, true, 'files under an excluded folder are excluded');
  });

  test('browse of a default job keeps hidden files and excludes only the marker', async () => {
    const entries = await browse('docs');
    assert.equal(entry(entries, '.upload_dir').exclusion_reason, 'marker');
    assert.equal(entry(entries, '.hidden').excluded, false, 'include_hidden defaults to true');
    assert.equal(entry(entries, 'a.txt').excluded, false);
  });

  test('browse outside any job excludes nothing', async () => {
    const reply = await admin.get('/api/directories/browse?relative_path=plain');
    expectStatus(reply, 200);
    assert.ok(reply.body.entries.length >= 3);
    for (const entry of reply.body.entries) assert.equal(entry.excluded, false, entry.name);
  });

  test('size counts bytes and files, excluded files included', async () => {
    const reply = await admin.get('/api/directories/size?relative_path=nohidden');
    expectStatus(reply, 200);
    const files = Object.values(NOHIDDEN_FILES);
    assert.equal(reply.body.files, files.length);
    assert.equal(
      reply.body.bytes,
      files.reduce((sum, text) => sum + Buffer.byteLength(text), 0),
    );
    const root = await admin.get('/api/directories/size?relative_path=plain');
    expectStatus(root, 200);
    assert.equal(root.body.files, 2);
    assert.equal(root.body.bytes, 6);
    expectStatus(await admin.get('/api/directories/size?relative_path=missing'), 404);
  });
});

describe('save-job', () => {
  test('creates a marker in an existing folder and the job appears in the list', async () => {
    const reply = await admin.post('/api/directories/save-job', { relative_path: 'plain', config: {} });
    expectStatus(reply, 200);
    assert.equal(reply.body.directory.relative_path, 'plain');
    assert.equal(reply.body.directory.config_error, null);
    assert.deepEqual(reply.body.directory.config, {
      job_name: 'plain',
      include_hidden: true,
      follow_symlinks: false,
      exclude: [],
      change_detection: 'sizes',
    });
    assert.equal(reply.body.directory.state.last_status, 'never_run');
    assert.ok(existsSync(join(scanRoot, 'plain', '.upload_dir')));
    assert.ok(await job('plain'), 'the job is listed');
    const children = await admin.get('/api/directories/children?relative_path=.');
    assert.equal(children.body.directories.find((d: Child) => d.name === 'plain').is_job, true);
  });

  test('saving again replaces the whole configuration', async () => {
    const first = await admin.post('/api/directories/save-job', {
      relative_path: 'plain',
      config: { job_name: 'plainjob', exclude: ['*.tmp'], follow_symlinks: true },
    });
    expectStatus(first, 200);
    assert.deepEqual(first.body.directory.config, {
      job_name: 'plainjob',
      include_hidden: true,
      follow_symlinks: true,
      exclude: ['*.tmp'],
      change_detection: 'sizes',
    });
    const second = await admin.post('/api/directories/save-job', {
      relative_path: 'plain',
      config: { include_hidden: false },
    });
    expectStatus(second, 200);
    assert.deepEqual(second.body.directory.config, {
      job_name: 'plain',
      include_hidden: false,
      follow_symlinks: false,
      exclude: [],
      change_detection: 'sizes',
    });
    const marker = readFileSync(join(scanRoot, 'plain', '.upload_dir'), 'utf8');
    assert.doesNotMatch(marker, /plainjob|\*\.tmp|follow_symlinks/);
    assert.deepEqual((await job('plain'))?.config, second.body.directory.config);
  });

  test('an invalid configuration is a 400 naming the field, and writes no marker', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ include_hidden: 'yes' }, /include_hidden/],
      [{ follow_symlinks: 1 }, /follow_symlinks/],
      [{ job_name: '../x' }, /job_name/],
      [{ job_name: '.hidden' }, /job_name/],
      [{ job_name: 'a'.repeat(65) }, /job_name/],
      [{ exclude: '*.tmp' }, /exclude/],
      [{ jobname: 'x' }, /jobname/],
    ];
    for (const [config, detail] of cases) {
      const reply = await admin.post('/api/directories/save-job', { relative_path: 'plain2', config });
      expectStatus(reply, 400, detail);
    }
    assert.ok(!existsSync(join(scanRoot, 'plain2', '.upload_dir')), 'no marker was written');
    expectStatus(await admin.post('/api/directories/save-job', { config: {} }), 400, /relative_path/);
    expectStatus(
      await admin.request('POST', '/api/directories/save-job', undefined, { raw: '{not json' }),
      400,
      /JSON/,
    );
  });

  test('a folder that does not exist is 404 and is not created', async () => {
    const reply = await admin.post('/api/directories/save-job', {
      relative_path: 'ghost/folder',
      config: {},
    });
    expectStatus(reply, 404, /ghost\/folder/);
    assert.ok(!existsSync(join(scanRoot, 'ghost')), 'the folder was not created');
  });

  test('a marker planted as a symlink is never written through (409); the target is untouched', async () => {
    const victim = join(outside, 'victim.txt');
    writeFileSync(victim, 'do not touch\n');
    const missing = join(outside, 'not-yet.txt');
    mkdirSync(join(scanRoot, 'planted'));
    mkdirSync(join(scanRoot, 'planted-dangling'));
    symlinkSync(victim, join(scanRoot, 'planted', '.upload_dir'));
    symlinkSync(missing, join(scanRoot, 'planted-dangling', '.upload_dir'));
    try {
      for (const folder of ['planted', 'planted-dangling']) {
        const reply = await admin.post('/api/directories/save-job', {
          relative_path: folder,
          config: { job_name: 'hijack' },
        });
        expectStatus(reply, 409, new RegExp(`${folder}/\\.upload_dir is a symbolic link.*remove it`));
      }
      assert.equal(readFileSync(victim, 'utf8'), 'do not touch\n');
      assert.ok(!existsSync(missing), 'no file was created through the dangling link');
      assert.equal(await job('planted'), undefined, 'a symlinked marker is not a job');
    } finally {
      rmSync(join(scanRoot, 'planted'), { recursive: true, force: true });
      rmSync(join(scanRoot, 'planted-dangling'), { recursive: true, force: true });
    }
  });

  const nestedMarker = () => join(scanRoot, 'docs', 'nested', '.upload_dir');

  test('a folder inside a job is refused with 400 or 409 (it exists: not 404)', async () => {
    try {
      const reply = await admin.post('/api/directories/save-job', {
        relative_path: 'docs/nested',
        config: {},
      });
      assert.ok(reply.status >= 400 && reply.status < 500, `refused: ${reply.status} ${reply.text}`);
      assert.match(reply.body.detail, /inside|nested/);
      assert.ok(
        [400, 409].includes(reply.status),
        `the folder exists, so a nested job is a bad request or a conflict, not ${reply.status}`,
      );
    } finally {
      rmSync(nestedMarker(), { force: true });
    }
  });

  test('a folder that contains jobs is refused too (its marker would hide them)', async () => {
    const reply = await admin.post('/api/directories/save-job', { relative_path: '.', config: {} });
    assert.ok([400, 409].includes(reply.status), `refused: ${reply.status} ${reply.text}`);
    assert.equal(typeof reply.body.detail, 'string');
    assert.ok(!existsSync(join(scanRoot, '.upload_dir')), 'no marker at the scan root');
    assert.ok(await job('docs'), 'the jobs below are still listed');
  });

  test('a refused nested save leaves no marker inside the job (it would be archived as data)', async () => {
    try {
      const reply = await admin.post('/api/directories/save-job', {
        relative_path: 'docs/nested',
        config: {},
      });
      assert.ok(reply.status >= 400 && reply.status < 500, `refused: ${reply.status} ${reply.text}`);
      assert.ok(
        !existsSync(nestedMarker()),
        'docs/nested/.upload_dir was written although the save was refused',
      );
    } finally {
      rmSync(nestedMarker(), { force: true });
    }
  });
});

describe('exclude', () => {
  test('adds an anchored pattern for a file and for a folder; browse shows them excluded', async () => {
    const file = await admin.post('/api/directories/exclude', { relative_path: 'docs/a.txt' });
    expectStatus(file, 200);
    assert.equal(file.body.directory.relative_path, 'docs');
    assert.deepEqual(file.body.directory.config.exclude, ['/a.txt']);
    const folder = await admin.post('/api/directories/exclude', { relative_path: 'docs/sub' });
    expectStatus(folder, 200);
    assert.deepEqual(folder.body.directory.config.exclude, ['/a.txt', '/sub/']);
    const again = await admin.post('/api/directories/exclude', { relative_path: 'docs/sub' });
    assert.deepEqual(again.body.directory.config.exclude, ['/a.txt', '/sub/'], 'no duplicate pattern');
    assert.match(readFileSync(join(scanRoot, 'docs', '.upload_dir'), 'utf8'), /\/sub\//);
    const entries = await browse('docs');
    assert.deepEqual(
      [entry(entries, 'a.txt').excluded, entry(entries, 'a.txt').exclusion_reason],
      [true, '/a.txt'],
    );
    assert.deepEqual(
      [entry(entries, 'sub').excluded, entry(entries, 'sub').exclusion_reason],
      [true, '/sub/'],
    );
    assert.equal(entry(entries, 'nested').excluded, false);
    assert.ok(existsSync(join(scanRoot, 'docs', 'a.txt')), 'excluding never deletes files');
  });

  test('the job folder itself, a path outside any job or a missing path is refused', async () => {
    expectStatus(await admin.post('/api/directories/exclude', { relative_path: 'docs' }), 400, /inside/);
    expectStatus(
      await admin.post('/api/directories/exclude', { relative_path: 'plain2' }),
      400,
      /inside a backup job/,
    );
    expectStatus(await admin.post('/api/directories/exclude', { relative_path: 'docs/missing.txt' }), 404);
  });
});

describe('clear-staged and delete-job', () => {
  test('clear-staged on a job without a staged archive answers cleared false', async () => {
    const reply = await admin.post('/api/directories/clear-staged', { relative_path: 'nohidden' });
    expectStatus(reply, 200);
    assert.equal(reply.body.cleared, false);
    assert.equal(reply.body.relative_path, 'nohidden');
    expectStatus(await admin.post('/api/directories/clear-staged', { relative_path: 'plain2' }), 404);
  });

  test('delete-job removes the marker, the local state and the staged archive; files stay', async () => {
    expectStatus(await admin.post('/api/directories/save-job', { relative_path: 'tmpjob', config: {} }), 200);
    await runNow(admin, { intervalMs: 25 });
    const ran = await job('tmpjob');
    assert.equal(ran?.state.last_status, 'failed', 'no Station configured');
    assert.equal(ran?.state.staged, true);
    assert.ok(stagedFiles(scout.dataDir).some((f) => f.startsWith('tmpjob-')));

    const deleted = await admin.post('/api/directories/delete-job', { relative_path: 'tmpjob' });
    expectStatus(deleted, 200);
    assert.ok(!existsSync(join(scanRoot, 'tmpjob', '.upload_dir')), 'the marker is gone');
    assert.equal(readFileSync(join(scanRoot, 'tmpjob', 't.txt'), 'utf8'), 'temporary', 'files are kept');
    assert.equal(await job('tmpjob'), undefined, 'the job is no longer listed');
    assert.deepEqual(
      stagedFiles(scout.dataDir).filter((f) => f.startsWith('tmpjob-')),
      [],
      'the staged archive is gone',
    );

    const saved = await admin.post('/api/directories/save-job', { relative_path: 'tmpjob', config: {} });
    expectStatus(saved, 200);
    assert.equal(saved.body.directory.state.last_status, 'never_run', 'the old state was removed');
    assert.equal(saved.body.directory.state.staged, false);
    assert.equal(saved.body.directory.state.last_error, null);
  });

  test('delete-job of a folder that is not a job is 404', async () => {
    expectStatus(await admin.post('/api/directories/delete-job', { relative_path: 'plain2' }), 404);
    expectStatus(await admin.post('/api/directories/force-send', { relative_path: 'plain2' }), 404);
  });
});

describe('relative_path escapes', () => {
  const escapes = ['..', '../x', 'docs/../../x', '/etc', 'escape', 'escape/inner', 'escape/new-folder'];

  test('every GET route refuses paths that leave the scan root with 400', async () => {
    for (const route of ['children', 'browse', 'size']) {
      for (const path of escapes) {
        const reply = await admin.get(`/api/directories/${route}?relative_path=${encodeURIComponent(path)}`);
        expectStatus(reply, 400, /relative_path/);
      }
    }
  });

  test('every POST route refuses paths that leave the scan root with 400 and touches nothing', async () => {
    const routes = ['save-job', 'exclude', 'delete-job', 'force-send', 'clear-staged'];
    for (const route of routes) {
      for (const path of [...escapes, 'escape/secret.txt']) {
        const reply = await admin.post(`/api/directories/${route}`, { relative_path: path, config: {} });
        expectStatus(reply, 400, /relative_path/);
      }
    }
    assert.equal(readFileSync(join(outside, '.upload_dir'), 'utf8'), '', 'the outside marker is untouched');
    assert.ok(!existsSync(join(outside, 'inner', '.upload_dir')));
    assert.ok(!existsSync(join(outside, 'new-folder')));
  });
});

describe('access', () => {
  test('a read token may list, browse and size, but not change anything', async () => {
    const token = readToken;
    expectStatus(await admin.get('/api/directories', { token }), 200);
    expectStatus(await admin.get('/api/directories/children?relative_path=.', { token }), 200);
    expectStatus(await admin.get('/api/directories/browse?relative_path=docs', { token }), 200);
    expectStatus(await admin.get('/api/directories/size?relative_path=docs', { token }), 200);
    const anon = new Client(scout.url);
    for (const route of ['save-job', 'exclude', 'delete-job', 'clear-staged']) {
      const reply = await anon.post(`/api/directories/${route}`, { relative_path: 'plain2' }, { token });
      expectStatus(reply, 403, /manage/);
    }
    expectStatus(
      await anon.post('/api/directories/force-send', { relative_path: 'docs' }, { token }),
      403,
      /backup/,
    );
    assert.ok(!existsSync(join(scanRoot, 'plain2', '.upload_dir')));
  });

  test('a backup token may not save or delete jobs', async () => {
    const anon = new Client(scout.url);
    const reply = await anon.post(
      '/api/directories/save-job',
      { relative_path: 'plain2', config: {} },
      { token: backupToken },
    );
    expectStatus(reply, 403, /manage/);
    expectStatus(await anon.get('/api/directories', { token: backupToken }), 403, /read/);
  });

  test('without sign-in every directories route is 401', async () => {
    const anon = new Client(scout.url);
    expectStatus(await anon.get('/api/directories'), 401);
    expectStatus(await anon.get('/api/directories/browse?relative_path=docs'), 401);
    expectStatus(await anon.post('/api/directories/save-job', { relative_path: 'plain2' }), 401);
  });

  test('a non-admin account may read but not save, exclude or delete', async () => {
    const created = await admin.post('/api/users', {
      username: 'viewer',
      password: 'viewer-initial-1',
      is_admin: false,
    });
    expectStatus(created, 201);
    const viewer = new Client(scout.url);
    expectStatus(await viewer.login('viewer', 'viewer-initial-1'), 200);
    expectStatus(
      await viewer.post('/api/session/change-password', {
        current_password: 'viewer-initial-1',
        new_password: ADMIN_PASSWORD,
        confirm_new_password: ADMIN_PASSWORD,
      }),
      200,
    );
    expectStatus(await viewer.get('/api/directories'), 200);
    expectStatus(await viewer.get('/api/directories/browse?relative_path=docs'), 200);
    for (const route of ['save-job', 'exclude', 'delete-job', 'force-send', 'clear-staged']) {
      const reply = await viewer.post(`/api/directories/${route}`, { relative_path: 'docs', config: {} });
      expectStatus(reply, 403, /admin/);
    }
    assert.ok(existsSync(join(scanRoot, 'docs', '.upload_dir')), 'the job is still there');
  });
});
