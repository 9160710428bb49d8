import type { Context } from 'hono';
import type { z } from 'zod';
import { badRequest } from '../errors.ts';
import { MIB, readBody } from './bounded-body.ts';
import { refuseNulIn } from './nul-characters.ts';

export const MAX_JSON_BYTES = MIB;

/** Describes the first problem of a failed schema check as "field: problem". */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid request body';
  const field = issue.path.map(String).join('.');
  return field ? `${field}: ${issue.message}` : issue.message;
}

/**
 * Reads and validates a JSON body; an empty body counts as `{}`. More than 1 MiB is a 413,
 * judged on the bytes as they arrive: reading stops there, nothing more is held.
 */
export async function readJson<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  const text = (await readBody(c, MAX_JSON_BYTES, 'JSON body')).toString('utf8');
  let value: unknown = {};
  if (text.trim() !== '') {
    try {
      value = JSON.parse(text);
    } catch {
      throw badRequest('request body is not valid JSON');
    }
  }
  refuseNulIn(value);
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(describeIssue(result.error));
  return result.data;
}

/**
 * Validates the query parameters like a body: one value per name (a repeated name is a 400),
 * the first problem named as "field: problem".
 */
export function readQuery<T extends z.ZodType>(c: Context, schema: T): z.infer<T> {
  const values: Record<string, string> = {};
  for (const [name, list] of Object.entries(c.req.queries())) {
    if (list.length > 1) throw badRequest(`${name}: give this query parameter once`);
    if (list[0] !== undefined) values[name] = list[0];
  }
  const result = schema.safeParse(values);
  if (!result.success) throw badRequest(describeIssue(result.error));
  return result.data;
}
