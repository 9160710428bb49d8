import { S3Client } from '@aws-sdk/client-s3';
import { AppError } from '../../core/errors.ts';
import { logger } from '../../core/log.ts';
import type { S3Config } from '../../core/s3-config.ts';

const log = logger.child({ mod: 'station/s3' });

function sdkLog(...content: unknown[]): void {
  const first = content[0] as { commandName?: string; error?: { name?: string } } | string | undefined;
  if (typeof first === 'string') log.debug({ sdk: first }, 'S3 client');
  else log.debug({ command: first?.commandName, error: first?.error?.name }, 'S3 client');
}

export function s3Client(config: S3Config): S3Client {
  return new S3Client({
    region: config.region,
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    forcePathStyle: config.forcePathStyle,
    ...(config.credentials
      ? {
          credentials: {
            accessKeyId: config.credentials.accessKeyId,
            secretAccessKey: config.credentials.secretAccessKey,
          },
        }
      : {}),
    // Ceph RGW (and other S3-compatible stores) refuse the SDK's default streaming checksums.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // The SDK logs every request at info (inputs included) and every answer it counts as an
    // error (a HEAD's 404 too): the store reports what matters itself, so this is debug only.
    logger: { debug: () => {}, info: () => {}, warn: sdkLog, error: sdkLog },
  });
}

export function isMissing(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return (
    e?.$metadata?.httpStatusCode === 404 ||
    ['NotFound', 'NoSuchKey', 'NoSuchUpload', 'NoSuchBucket'].includes(e?.name ?? '')
  );
}

export const unavailableStore = (what: string, cause: unknown) =>
  new AppError(503, `the object store did not answer: ${what} (${(cause as Error)?.name ?? 'error'})`, {
    cause,
  });
