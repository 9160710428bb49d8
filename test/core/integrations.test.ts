// Notifications, hooks and trusted certificates on both roles: /api/ntfy (save, validate,
// test send to a local receiver), /api/hooks (commands, script files), /api/certificates
// (CA PEM files made with `openssl`), and who may use them (scopes, non-admin accounts).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DAY_MS } from '../../src/core/clock.ts';
import { expectStatus } from '../helpers/assertions.ts';
import { adminClient, Client, mintAutomationToken, userClient } from '../helpers/http.ts';
import { makeCa, makePki, type Pki } from '../helpers/pki.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { freePort, type Role, startServer, type TestServer } from '../helpers/server.ts';

/** A listed file or certificate. */
interface Named {
  filename: string;
}

const filenames = (list: Named[]) => list.map((e) => e.filename);

// A private CA, a leaf certificate it signed and a second CA, made with the `openssl` program.
const work = mkdtempSync(join(tmpdir(), 'backupd-integrations-'));
let pems: Pki & { otherCa: string };
// A local stand-in for an ntfy server: records every request; the topic "broken" answers 500.
let receiver: Receiver;

// ---------------------------------------------------------------------------------------------
// Per role: the server, its admin, tokens and a signed-in non-admin account.

interface Ctx {
  server: TestServer;
  admin: Client;
  viewer: Client;
  readToken: string;
  manageToken: string;
}

const ctx: Partial<Record<Role, Ctx>> = {};

async function setUp(role: Role): Promise<Ctx> {
  const server = await startServer(role);
  const admin = await adminClient(server.url);
  return {
    server,
    admin,
    viewer: await userClient(admin, 'viewer', 'viewer-initial-1'),
    readToken: await mintAutomationToken(admin, ['read']),
    manageToken: await mintAutomationToken(admin, ['manage']),
  };
}

before(async () => {
  pems = { ...makePki(work, 'leaf'), otherCa: makeCa(work, 'other-ca', 'Other Test CA').cert };
  receiver = await startReceiver();
  const [station, scout] = await Promise.all([setUp('station'), setUp('scout')]);
  ctx.station = station;
  ctx.scout = scout;
});

after(async () => {
  await Promise.all([ctx.station?.server.dispose(), ctx.scout?.server.dispose(), receiver?.close()]);
  rmSync(work, { recursive: true, force: true });
});

/** Uploads a hook script file (multipart) with the client's cookie or a token. */
const uploadHook = (client: Client, filename: string, content: string, token?: string) =>
  client.upload('/api/hooks/files', 'hook_file', filename, content, { token });

/** Uploads a certificate file (multipart) with the client's cookie or a token. */
const uploadCertificate = (client: Client, filename: string, pem: string, token?: string) =>
  client.upload('/api/certificates/files', 'certificate_file', filename, pem, { token });

// ---------------------------------------------------------------------------------------------

for (const role of ['station', 'scout'] as const) {
  const c = () => {
    const value = ctx[role];
    if (!value) throw new Error(`${role} not started`);
    return value;
  };
  const hookFields =
    role === 'station'
      ? { pre: 'pre_command', post: 'post_command' }
      : { pre: 'hook_pre_command', post: 'hook_post_command' };
  const otherHookFields =
    role === 'station'
      ? { pre: 'hook_pre_command', post: 'hook_post_command' }
      : { pre: 'pre_command', post: 'post_command' };
  const filterFields = ['ntfy_match_scout_id', 'ntfy_match_scout_instance_id', 'ntfy_match_source'];
  const emptyNtfy =
    role === 'station'
      ? {
          ntfy_url: '',
          ntfy_topic: '',
          ntfy_message_template: '',
          ntfy_match_scout_id: '',
          ntfy_match_scout_instance_id: '',
          ntfy_match_source: '',
        }
      : { ntfy_url: '', ntfy_topic: '', ntfy_message_template: '' };

  describe(`${role}: /api/ntfy`, () => {
    test('GET returns the empty settings and the default template', async () => {
      const reply = await c().admin.get('/api/ntfy');
      expectStatus(reply, 200);
      assert.deepEqual(reply.body.settings, emptyNtfy);
      assert.equal(typeof reply.body.default_template, 'string');
      assert.ok(reply.body.default_template.length > 0, 'a default template is named');
      assert.match(reply.body.default_template, /\{\{\s*\w+\s*\}\}/, 'the default template has a variable');
    });

    test('POST saves; a later write replaces the listed fields and empties omitted ones', async () => {
      const full = {
        ntfy_url: 'https://ntfy.example.test',
        ntfy_topic: 'backups_1-a',
        ntfy_message_template: '{{event}}: {{summary}}',
      };
      const saved = await c().admin.post('/api/ntfy', full);
      expectStatus(saved, 200);
      assert.deepEqual(saved.body.settings, { ...emptyNtfy, ...full });
      const read = await c().admin.get('/api/ntfy');
      assert.deepEqual(read.body.settings, { ...emptyNtfy, ...full });

      const partial = await c().admin.post('/api/ntfy', { ntfy_url: 'http://ntfy.other.test' });
      expectStatus(partial, 200);
      const after = await c().admin.get('/api/ntfy');
      assert.deepEqual(after.body.settings, { ...emptyNtfy, ntfy_url: 'http://ntfy.other.test' });
    });

    test('POST validates: url scheme, topic, unknown fields; nothing is saved on 400', async () => {
      const good = { ntfy_url: 'https://ntfy.example.test', ntfy_topic: 'good', ntfy_message_template: 'x' };
      expectStatus(await c().admin.post('/api/ntfy', good), 200);
      expectStatus(await c().admin.post('/api/ntfy', { ...good, ntfy_url: 'ftp://x' }), 400, /ntfy_url/);
      expectStatus(await c().admin.post('/api/ntfy', { ...good, ntfy_url: 'not a url' }), 400, /ntfy_url/);
      expectStatus(
        await c().admin.post('/api/ntfy', { ...good, ntfy_topic: 'bad topic!' }),
        400,
        /ntfy_topic/,
      );
      expectStatus(await c().admin.post('/api/ntfy', { ...good, ntfy_topic: '../x' }), 400, /ntfy_topic/);
      expectStatus(
        await c().admin.post('/api/ntfy', { ...good, ntfy_topic: 'a'.repeat(65) }),
        400,
        /ntfy_topic/,
      );
      expectStatus(await c().admin.post('/api/ntfy', { ...good, surprise: 'field' }), 400);
      expectStatus(await c().admin.post('/api/ntfy', undefined, { raw: '{not json' }), 400);
      const read = await c().admin.get('/api/ntfy');
      assert.deepEqual(read.body.settings, { ...emptyNtfy, ...good }, 'rejected writes change nothing');
    });

    if (role === 'station') {
      test('the Station accepts and keeps the Scout, instance and source filters', async () => {
        const body = {
          ntfy_url: 'https://ntfy.example.test',
          ntfy_topic: 'filtered',
          ntfy_message_template: '',
          ntfy_match_scout_id: 'host-a,host-b',
          ntfy_match_scout_instance_id: 'inst-1',
          ntfy_match_source: 'upload',
        };
        const saved = await c().admin.post('/api/ntfy', body);
        expectStatus(saved, 200);
        assert.deepEqual(saved.body.settings, body);
        assert.deepEqual((await c().admin.get('/api/ntfy')).body.settings, body);
        // Omitting the filters on the next write empties them.
        await c().admin.post('/api/ntfy', { ntfy_url: 'https://ntfy.example.test', ntfy_topic: 'filtered' });
        const read = await c().admin.get('/api/ntfy');
        for (const field of filterFields) assert.equal(read.body.settings[field], '', field);
      });
    } else {
      test('the Scout refuses the Station-only filter fields', async () => {
        const before = (await c().admin.get('/api/ntfy')).body.settings;
        for (const field of filterFields) {
          const reply = await c().admin.post('/api/ntfy', {
            ntfy_url: 'https://ntfy.example.test',
            ntfy_topic: 'x',
            [field]: 'anything',
          });
          expectStatus(reply, 400);
          const tested = await c().admin.post('/api/ntfy/test', {
            ntfy_url: receiver.url,
            ntfy_topic: 'x',
            [field]: 'anything',
          });
          expectStatus(tested, 400);
        }
        assert.deepEqual((await c().admin.get('/api/ntfy')).body.settings, before);
      });
    }

    test('POST /api/ntfy/test sends to the given server and saves nothing', async () => {
      const saved = {
        ntfy_url: 'https://ntfy.example.test',
        ntfy_topic: 'kept',
        ntfy_message_template: 'kept {{summary}}',
      };
      expectStatus(await c().admin.post('/api/ntfy', saved), 200);
      const before = (await c().admin.get('/api/ntfy')).body.settings;
      const seen = receiver.messages.length;
      const topic = `${role}-probe`;
      const reply = await c().admin.post('/api/ntfy/test', {
        ntfy_url: `${receiver.url}/`,
        ntfy_topic: topic,
        ntfy_message_template: 'TEST[{{event}}] {{summary}}',
      });
      expectStatus(reply, 200);
      assert.equal(reply.body.status, 'sent', reply.text);
      assert.equal(typeof reply.body.detail, 'string');
      const got = receiver.messages.slice(seen);
      assert.equal(got.length, 1, 'exactly one request reached the receiver');
      const message = got[0];
      assert.ok(message);
      assert.equal(message.method, 'POST');
      assert.equal(message.url, `/${topic}`);
      assert.match(String(message.headers['content-type']), /^text\/plain/);
      assert.match(message.body, /^TEST\[[^\]]*\] \S/, `the template was rendered: ${message.body}`);
      assert.doesNotMatch(message.body, /\{\{/, 'no placeholder is left');
      assert.ok(String(message.headers.title ?? '').length > 0, 'a Title header');
      assert.equal(typeof message.headers.tags, 'string', 'a Tags header');
      assert.ok(String(message.headers.priority ?? '').length > 0, 'a Priority header');
      assert.deepEqual((await c().admin.get('/api/ntfy')).body.settings, before, 'the test saved nothing');
      // ntfy shows the Title header as sent (it decodes RFC 2047 words, not %XX escapes).
      assert.doesNotMatch(
        String(message.headers.title),
        /%[0-9A-Fa-f]{2}/,
        'the Title is not percent-encoded',
      );
    });

    test('POST /api/ntfy/test reports failed for an unreachable or failing server', async () => {
      const closedPort = await freePort();
      const unreachable = await c().admin.post('/api/ntfy/test', {
        ntfy_url: `http://127.0.0.1:${closedPort}`,
        ntfy_topic: 'nobody',
      });
      expectStatus(unreachable, 200);
      assert.equal(unreachable.body.status, 'failed', unreachable.text);
      assert.equal(typeof unreachable.body.detail, 'string');
      assert.ok(unreachable.body.detail.length > 0, 'the failure is explained');

      const broken = await c().admin.post('/api/ntfy/test', { ntfy_url: receiver.url, ntfy_topic: 'broken' });
      expectStatus(broken, 200);
      assert.equal(broken.body.status, 'failed', broken.text);
      assert.match(broken.body.detail, /500/);

      expectStatus(await c().admin.post('/api/ntfy/test', { ntfy_url: 'ftp://x', ntfy_topic: 'a' }), 400);
    });
  });

  describe(`${role}: /api/hooks`, () => {
    test('GET returns empty commands and no files', async () => {
      const reply = await c().admin.get('/api/hooks');
      expectStatus(reply, 200);
      assert.equal(reply.body[hookFields.pre], '');
      assert.equal(reply.body[hookFields.post], '');
      assert.deepEqual(reply.body.files, []);
    });

    test(`POST saves ${hookFields.pre}/${hookFields.post}; omitted fields become empty`, async () => {
      const saved = await c().admin.post('/api/hooks', {
        [hookFields.pre]: 'echo before',
        [hookFields.post]: 'echo after',
      });
      expectStatus(saved, 200);
      let read = await c().admin.get('/api/hooks');
      assert.equal(read.body[hookFields.pre], 'echo before');
      assert.equal(read.body[hookFields.post], 'echo after');
      expectStatus(await c().admin.post('/api/hooks', { [hookFields.post]: 'echo only after' }), 200);
      read = await c().admin.get('/api/hooks');
      assert.equal(read.body[hookFields.pre], '');
      assert.equal(read.body[hookFields.post], 'echo only after');
      expectStatus(await c().admin.post('/api/hooks', {}), 200);
      read = await c().admin.get('/api/hooks');
      assert.equal(read.body[hookFields.pre], '');
      assert.equal(read.body[hookFields.post], '');
    });

    test("the other role's field names and bad values are refused", async () => {
      expectStatus(await c().admin.post('/api/hooks', { [otherHookFields.pre]: 'echo x' }), 400);
      expectStatus(await c().admin.post('/api/hooks', { [otherHookFields.post]: 'echo x' }), 400);
      expectStatus(await c().admin.post('/api/hooks', { [hookFields.pre]: 42 }), 400);
      const read = await c().admin.get('/api/hooks');
      assert.equal(read.body[hookFields.pre], '');
      assert.equal(read.body[otherHookFields.pre], undefined);
    });

    test('a hook file is uploaded, listed, read and deleted', async () => {
      const script = '#!/bin/sh\necho "hello from the hook"\n';
      const created = await uploadHook(c().admin, 'notify.sh', script);
      expectStatus(created, 201);
      const list = await c().admin.get('/api/hooks');
      const names = filenames(list.body.files);
      assert.deepEqual(names, ['notify.sh']);
      const read = await c().admin.get('/api/hooks/files/notify.sh');
      expectStatus(read, 200);
      assert.deepEqual(read.body, { filename: 'notify.sh', content: script });

      // A second upload under the same name replaces the content.
      expectStatus(await uploadHook(c().admin, 'notify.sh', 'echo v2\n'), 201);
      assert.equal((await c().admin.get('/api/hooks/files/notify.sh')).body.content, 'echo v2\n');

      const deleted = await c().admin.delete('/api/hooks/files/notify.sh');
      expectStatus(deleted, 200);
      expectStatus(await c().admin.get('/api/hooks/files/notify.sh'), 404);
      expectStatus(await c().admin.delete('/api/hooks/files/notify.sh'), 404);
      assert.deepEqual((await c().admin.get('/api/hooks')).body.files, []);
    });

    test('unsafe file names and malformed uploads are refused', async () => {
      for (const name of ['../x', '.hidden', 'a/b', '..']) {
        const reply = await uploadHook(c().admin, name, 'echo x\n');
        expectStatus(reply, 400);
      }
      expectStatus(await c().admin.get('/api/hooks/files/.hidden'), 400);
      expectStatus(await c().admin.get('/api/hooks/files/..%2Fx'), 400);
      expectStatus(await c().admin.delete('/api/hooks/files/.hidden'), 400);
      // Wrong field name, and JSON instead of multipart.
      expectStatus(await c().admin.upload('/api/hooks/files', 'other_field', 'ok.sh', 'echo x\n'), 400);
      expectStatus(await c().admin.post('/api/hooks/files', { hook_file: 'echo x' }), 400);
      assert.deepEqual((await c().admin.get('/api/hooks')).body.files, []);
    });
  });

  describe(`${role}: /api/certificates`, () => {
    test('a CA PEM is accepted and listed with subject, issuer and expiry', async () => {
      const reply = await uploadCertificate(c().admin, 'test-ca.pem', pems.ca);
      expectStatus(reply, 201);
      const list = await c().admin.get('/api/certificates');
      expectStatus(list, 200);
      assert.ok(Array.isArray(list.body.certificates));
      assert.equal(list.body.certificates.length, 1);
      const entry = list.body.certificates[0];
      assert.equal(entry.filename, 'test-ca.pem');
      assert.match(entry.subject, /CN=Test CA/);
      assert.match(entry.issuer, /CN=Test CA/);
      const expires = Date.parse(entry.expires_at);
      assert.ok(Number.isFinite(expires), `expires_at is a date: ${entry.expires_at}`);
      assert.ok(expires > Date.now() + 20 * DAY_MS, 'about 30 days ahead');
      assert.ok(expires < Date.now() + 40 * DAY_MS, 'about 30 days ahead');
    });

    test('a leaf certificate is refused as not a CA; a non-PEM file is refused', async () => {
      const leaf = await uploadCertificate(c().admin, 'leaf.pem', pems.leaf);
      expectStatus(leaf, 400, /CA/);
      const junk = await uploadCertificate(c().admin, 'junk.pem', 'this is not a certificate\n');
      expectStatus(junk, 400, /PEM|certificate/i);
      const broken = await uploadCertificate(
        c().admin,
        'broken.pem',
        '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
      );
      expectStatus(broken, 400);
      const unsafe = await uploadCertificate(c().admin, '../ca.pem', pems.ca);
      expectStatus(unsafe, 400);
      const names = filenames((await c().admin.get('/api/certificates')).body.certificates);
      assert.deepEqual(names, ['test-ca.pem'], 'nothing refused was stored');
    });

    test('a certificate is deleted', async () => {
      const added = await uploadCertificate(c().admin, 'other-ca.pem', pems.otherCa);
      expectStatus(added, 201);
      let names = filenames((await c().admin.get('/api/certificates')).body.certificates);
      assert.deepEqual(names.sort(), ['other-ca.pem', 'test-ca.pem']);
      expectStatus(await c().admin.delete('/api/certificates/files/other-ca.pem'), 200);
      names = filenames((await c().admin.get('/api/certificates')).body.certificates);
      assert.deepEqual(names, ['test-ca.pem']);
      expectStatus(await c().admin.delete('/api/certificates/files/other-ca.pem'), 404);
    });
  });

  describe(`${role}: access`, () => {
    test('a read token gets 403 on ntfy, hooks and certificates; a manage token gets 200', async () => {
      const { admin, readToken, manageToken } = c();
      expectStatus(await uploadHook(admin, 'probe.sh', 'echo\n'), 201);
      const reads = ['/api/ntfy', '/api/hooks', '/api/certificates', '/api/hooks/files/probe.sh'];
      for (const path of reads) {
        const denied = await admin.get(path, { token: readToken });
        assert.equal(denied.status, 403, `read token on ${path}: ${denied.status} ${denied.text}`);
        const allowed = await admin.get(path, { token: manageToken });
        assert.equal(allowed.status, 200, `manage token on ${path}: ${allowed.status} ${allowed.text}`);
      }
      expectStatus(await admin.post('/api/ntfy', {}, { token: readToken }), 403);
      expectStatus(await admin.post('/api/ntfy/test', {}, { token: readToken }), 403);
      expectStatus(await admin.post('/api/hooks', {}, { token: readToken }), 403);
      expectStatus(await uploadHook(admin, 'r.sh', 'x', readToken), 403);
      expectStatus(await admin.delete('/api/hooks/files/probe.sh', { token: readToken }), 403);
      expectStatus(await uploadCertificate(admin, 'r.pem', pems.otherCa, readToken), 403);
      expectStatus(await admin.delete('/api/certificates/files/test-ca.pem', { token: readToken }), 403);
      // A manage token may write too.
      expectStatus(await uploadHook(admin, 'm.sh', 'echo m\n', manageToken), 201);
      expectStatus(await admin.delete('/api/hooks/files/m.sh', { token: manageToken }), 200);
      // Without any sign-in.
      const anonymous = new Client(c().server.url);
      for (const path of reads) expectStatus(await anonymous.get(path), 401);
    });

    test('a non-admin account cannot write; reads follow the role', async () => {
      const { viewer } = c();
      expectStatus(await viewer.post('/api/ntfy', { ntfy_url: '', ntfy_topic: '' }), 403);
      expectStatus(await viewer.post('/api/ntfy/test', { ntfy_url: receiver.url, ntfy_topic: 'v' }), 403);
      expectStatus(await viewer.post('/api/hooks', { [hookFields.pre]: 'touch /tmp/owned' }), 403);
      expectStatus(await uploadHook(viewer, 'v.sh', 'echo v\n'), 403);
      expectStatus(await viewer.delete('/api/hooks/files/probe.sh'), 403);
      expectStatus(await uploadCertificate(viewer, 'v.pem', pems.otherCa), 403);
      expectStatus(await viewer.delete('/api/certificates/files/test-ca.pem'), 403);
      // Session access: settings and hook settings for every signed-in account.
      expectStatus(await viewer.get('/api/ntfy'), 200);
      expectStatus(await viewer.get('/api/hooks'), 200);
      // Hook file contents and certificates: admin-only on the Station, session on a Scout.
      const adminOnlyReads = role === 'station' ? 403 : 200;
      expectStatus(await viewer.get('/api/hooks/files/probe.sh'), adminOnlyReads);
      expectStatus(await viewer.get('/api/certificates'), adminOnlyReads);
      assert.equal((await c().admin.get('/api/hooks')).body[hookFields.pre], '', 'nothing was saved');
      expectStatus(await c().admin.delete('/api/hooks/files/probe.sh'), 200);
    });
  });

  describe(`${role}: persistence`, () => {
    test('certificates, hooks and ntfy settings survive a restart', async () => {
      const ntfy = { ntfy_url: receiver.url, ntfy_topic: 'persist', ntfy_message_template: '{{title}}' };
      expectStatus(await c().admin.post('/api/ntfy', ntfy), 200);
      expectStatus(await c().admin.post('/api/hooks', { [hookFields.pre]: 'true' }), 200);
      expectStatus(await uploadHook(c().admin, 'kept.sh', 'echo kept\n'), 201);
      const current = c();
      current.server = await current.server.restart();
      current.admin = await adminClient(current.server.url);
      const certs = await current.admin.get('/api/certificates');
      expectStatus(certs, 200);
      assert.deepEqual(filenames(certs.body.certificates), ['test-ca.pem']);
      assert.match(certs.body.certificates[0].subject, /CN=Test CA/);
      assert.deepEqual((await current.admin.get('/api/ntfy')).body.settings, { ...emptyNtfy, ...ntfy });
      const hooks = await current.admin.get('/api/hooks');
      assert.equal(hooks.body[hookFields.pre], 'true');
      assert.deepEqual(filenames(hooks.body.files), ['kept.sh']);
      assert.equal((await current.admin.get('/api/hooks/files/kept.sh')).body.content, 'echo kept\n');
    });
  });
}
