import { z } from 'zod';
import { httpUrlField } from '../../shared/http-url.ts';
import { logger } from '../log.ts';
import type { SettingsStore } from '../settings/settings-store.ts';
import { renderTemplate } from './template.ts';

const log = logger.child({ mod: 'core/notify' });
const SECTION = 'ntfy';
const SEND_TIMEOUT_MS = 5000;

export const DEFAULT_TEMPLATE = '{{summary}}';

/** What every notification carries; events add their own facts. */
export interface NotifyEvent {
  /** e.g. snapshot_stored, upload_failed, verify_failed, restore_request_created, job_failed … */
  event: string;
  /** What produced it: upload, verify, restore_request, backup, restore. */
  source: string;
  title: string;
  /** One sentence for the default template. */
  summary: string;
  /** 'default' or 'high' (unusual snapshots, failures). */
  priority?: 'default' | 'high';
  tags?: string[];
  scout_id?: string;
  scout_instance_id?: string;
  job_name?: string;
  [fact: string]: string | number | boolean | string[] | undefined;
}

const url = httpUrlField('ntfy_url must be an http:// or https:// address (e.g. https://ntfy.sh)');

/** The fields of a role's ntfy section: the Station adds its filters. */
export function ntfySchema(withFilters: boolean) {
  const base = {
    ntfy_url: url.default(''),
    ntfy_topic: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9_-]{0,64}$/, 'ntfy_topic must be up to 64 letters, digits, "_" or "-"')
      .default(''),
    ntfy_message_template: z
      .string()
      .max(4000, 'ntfy_message_template is at most 4000 characters')
      .default(''),
  };
  const filters = {
    ntfy_match_scout_id: z.string().trim().max(1000).default(''),
    ntfy_match_scout_instance_id: z.string().trim().max(1000).default(''),
    ntfy_match_source: z.string().trim().max(1000).default(''),
  };
  return z.strictObject(withFilters ? { ...base, ...filters } : base);
}

export type NtfySettings = {
  ntfy_url: string;
  ntfy_topic: string;
  ntfy_message_template: string;
  ntfy_match_scout_id?: string;
  ntfy_match_scout_instance_id?: string;
  ntfy_match_source?: string;
};

/** Header text as ntfy reads it: plain ASCII as is, anything else RFC 2047-encoded. */
function headerText(text: string): string {
  return /^[\x20-\x7e]*$/.test(text) ? text : `=?UTF-8?B?${Buffer.from(text, 'utf8').toString('base64')}?=`;
}

/** An empty filter matches everything; otherwise a comma-separated list of exact values. */
function matches(filter: string | undefined, value: string | undefined): boolean {
  if (!filter) return true;
  return filter
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean)
    .includes(value ?? '');
}

/** Push notifications through an ntfy server: never blocks or fails the work it reports on. */
export function createNotifier(store: SettingsStore, withFilters: boolean) {
  const schema = ntfySchema(withFilters);

  async function settings(): Promise<NtfySettings> {
    const parsed = schema.safeParse(await store.read(SECTION));
    return parsed.success ? parsed.data : schema.parse({});
  }

  async function deliver(
    config: NtfySettings,
    event: NotifyEvent,
  ): Promise<{ ok: boolean; status: number | null; detail: string }> {
    if (!config.ntfy_url || !config.ntfy_topic) {
      return { ok: false, status: null, detail: 'ntfy_url and ntfy_topic must both be set' };
    }
    const values: Record<string, string> = {};
    for (const [k, v] of Object.entries(event)) values[k] = Array.isArray(v) ? v.join(',') : String(v ?? '');
    const body = renderTemplate(config.ntfy_message_template || DEFAULT_TEMPLATE, values);
    try {
      const res = await fetch(`${config.ntfy_url.replace(/\/+$/, '')}/${config.ntfy_topic}`, {
        method: 'POST',
        headers: {
          'content-type': 'text/plain; charset=utf-8',
          Title: headerText(event.title),
          Tags: (event.tags ?? []).join(','),
          Priority: event.priority === 'high' ? 'high' : 'default',
        },
        body,
        signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      });
      return { ok: res.ok, status: res.status, detail: res.ok ? 'sent' : `ntfy answered ${res.status}` };
    } catch (error) {
      return {
        ok: false,
        status: null,
        detail: `could not reach ${config.ntfy_url}: ${(error as Error).message}`,
      };
    }
  }

  return {
    schema,
    settings,
    async save(input: Partial<NtfySettings>): Promise<NtfySettings> {
      await store.write(SECTION, schema.parse(input));
      return settings();
    },
    /** Sends with the given settings, saving nothing; reports the outcome. */
    test: (input: NtfySettings) =>
      deliver(input, {
        event: 'test',
        source: 'test',
        title: 'backupd test notification',
        summary: 'This is a test notification from backupd.',
        tags: ['test'],
      }),
    /** Fire and forget: a failure is logged, never thrown. */
    notify(event: NotifyEvent): void {
      void (async () => {
        const config = await settings();
        if (!config.ntfy_url || !config.ntfy_topic) return;
        if (
          !matches(config.ntfy_match_scout_id, event.scout_id) ||
          !matches(config.ntfy_match_scout_instance_id, event.scout_instance_id) ||
          !matches(config.ntfy_match_source, event.source)
        ) {
          return;
        }
        const outcome = await deliver(config, event);
        if (!outcome.ok)
          log.warn({ event: event.event, detail: outcome.detail }, 'notification not delivered');
      })().catch((error: unknown) => log.warn({ err: error }, 'notification failed'));
    },
  };
}

export type Notifier = ReturnType<typeof createNotifier>;
