import pino from 'pino';
import { serializeError } from './log-errors.ts';

/** Every field that may carry a secret, wherever it appears in a logged object. */
export const REDACTED_PATHS = [
  'password',
  'new_password',
  'current_password',
  'confirm_new_password',
  'token',
  'credential',
  'scout_credential',
  'authorization',
  'cookie',
  '*.password',
  '*.new_password',
  '*.current_password',
  '*.confirm_new_password',
  '*.token',
  '*.credential',
  '*.scout_credential',
  '*.authorization',
  '*.cookie',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'settings.scout_credential',
];

export const logger = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  serializers: { err: serializeError, error: serializeError },
  base: { pid: process.pid },
});

export type Logger = pino.Logger;
