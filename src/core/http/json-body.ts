import type { Context } from 'hono';
import type { z } from 'zod';
import { badRequest } from '../errors.ts';

const MAX_JSON_BYTES = 1024 * 1024;

/** Describes the first problem of a failed schema check as "field: problem". */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid request body';
  const field = issue.path.map(String).join('.');
  return field ? `${field}: ${issue.message}` : issue.message;
}

/** Reads and validates a JSON body; an empty body counts as `{}`. */
export async function readJson<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  const text = await c.req.text();
  if (text.length > MAX_JSON_BYTES) throw badRequest('request body is larger than 1 MiB');
  let value: unknown = {};
  if (text.trim() !== '') {
    try {
      value = JSON.parse(text);
    } catch {
      throw badRequest('request body is not valid JSON');
    }
  }
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(describeIssue(result.error));
  return result.data;
}
