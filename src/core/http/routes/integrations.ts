import { type Context, Hono } from 'hono';
import { z } from 'zod';
import type { Removed } from '../../../shared/protocol/accounts.ts';
import type {
  CertificateList,
  FileSaved,
  HookFileReply,
  HooksReply,
  NtfyReply,
  NtfyTestReply,
} from '../../../shared/protocol/integrations.ts';
import { badRequest, payloadTooLarge } from '../../errors.ts';
import { MAX_UPLOAD_FILE_BYTES } from '../../hooks/hook-files.ts';
import type { Integrations } from '../../integrations.ts';
import { DEFAULT_TEMPLATE } from '../../notify/ntfy.ts';
import { adminOnly, signedIn } from '../access.ts';
import type { AppEnv } from '../app-env.ts';
import { MIB, readBody } from '../bounded-body.ts';
import { readJson } from '../json-body.ts';

/** A multipart form (a file and its envelope) is read up to 10 MiB, counted on the bytes. */
export const MAX_MULTIPART_BYTES = 10 * MIB;

/** Reads one file field of a multipart form: `{name, content}`, at most 1 MiB. */
async function uploadedFile(c: Context<AppEnv>, field: string): Promise<{ name: string; content: Buffer }> {
  const type = c.req.header('content-type') ?? '';
  if (!type.startsWith('multipart/form-data')) {
    throw badRequest(`send the file as multipart/form-data in the field ${field}`);
  }
  const bytes = await readBody(c, MAX_MULTIPART_BYTES, 'multipart body');
  let form: FormData;
  try {
    form = await new Response(bytes, { headers: { 'content-type': type } }).formData();
  } catch {
    throw badRequest('the multipart body cannot be read');
  }
  const file = form.get(field);
  if (!(file instanceof File)) throw badRequest(`the form has no file in the field ${field}`);
  if (file.size > MAX_UPLOAD_FILE_BYTES) throw payloadTooLarge(`${field} is larger than 1 MiB`);
  return { name: file.name, content: Buffer.from(await file.arrayBuffer()) };
}

const HookCommand = z.string().max(4000, 'hook commands are at most 4000 characters').optional();

/**
 * `/api/ntfy`, `/api/hooks` and `/api/certificates`. They hold secrets (topics, commands),
 * so automation tokens need `manage` even to read them. The Station lets only admins read
 * hook files and certificates; a Scout lets any signed-in account read them.
 */
export function integrationRoutes(integrations: Integrations) {
  const app = new Hono<AppEnv>();
  const { notifier, hooks, hookFiles, certificates } = integrations;
  const station = integrations.role === 'station';
  const fileReader = station ? adminOnly('manage') : signedIn('manage');
  const hookFields = station ? ['pre_command', 'post_command'] : ['hook_pre_command', 'hook_post_command'];
  const HookSettings = z.strictObject(Object.fromEntries(hookFields.map((f) => [f, HookCommand])));

  app.get('/ntfy', signedIn('manage'), async (c) =>
    c.json({ settings: await notifier.settings(), default_template: DEFAULT_TEMPLATE } satisfies NtfyReply),
  );
  app.post('/ntfy', adminOnly('manage'), async (c) => {
    const input = await readJson(c, notifier.schema);
    return c.json({ settings: await notifier.save(input) });
  });
  app.post('/ntfy/test', adminOnly('manage'), async (c) => {
    const input = await readJson(c, notifier.schema);
    const outcome = await notifier.test(input);
    return c.json({
      status: outcome.ok ? 'sent' : 'failed',
      http_status: outcome.status,
      detail: outcome.detail,
    } satisfies NtfyTestReply);
  });

  app.get('/hooks', signedIn('manage'), async (c) =>
    c.json({ ...(await hooks.settings()), files: await hookFiles.list() } satisfies HooksReply),
  );
  app.post('/hooks', adminOnly('manage'), async (c) => {
    const input = (await readJson(c, HookSettings)) as Record<string, string | undefined>;
    const saved = await hooks.save(Object.fromEntries(Object.entries(input).map(([k, v]) => [k, v ?? ''])));
    return c.json(saved);
  });
  app.post('/hooks/files', adminOnly('manage'), async (c) => {
    const file = await uploadedFile(c, 'hook_file');
    await hookFiles.write(file.name, file.content);
    return c.json({ status: 'saved', filename: file.name } satisfies FileSaved, 201);
  });
  app.get('/hooks/files/:filename', fileReader, async (c) => {
    const filename = c.req.param('filename');
    return c.json({ filename, content: await hookFiles.read(filename) } satisfies HookFileReply);
  });
  app.delete('/hooks/files/:filename', adminOnly('manage'), async (c) => {
    await hookFiles.remove(c.req.param('filename'));
    return c.json({ status: 'deleted', filename: c.req.param('filename') } satisfies Removed);
  });

  app.get('/certificates', fileReader, async (c) =>
    c.json((await certificates.list()) satisfies CertificateList),
  );
  app.post('/certificates/files', adminOnly('manage'), async (c) => {
    const file = await uploadedFile(c, 'certificate_file');
    return c.json((await certificates.add(file.name, file.content)) satisfies FileSaved, 201);
  });
  app.delete('/certificates/files/:filename', adminOnly('manage'), async (c) =>
    c.json((await certificates.remove(c.req.param('filename'))) satisfies Removed),
  );

  return app;
}
