import { z } from 'zod';

/** Whether `value` is an absolute http:// or https:// URL. */
export function isHttpUrl(value: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/** A settings field holding an http(s) URL; empty text means "not set". */
export function httpUrlField(message: string) {
  return z
    .string()
    .trim()
    .refine((value) => value === '' || isHttpUrl(value), message);
}
