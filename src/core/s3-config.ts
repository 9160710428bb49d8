/**
 * `STORAGE_URL=s3://BUCKET[/PREFIX]` and the standard S3 variables (docs/operators-guide.md, section 9). The
 * secret key is kept out of `JSON.stringify` and `console.log` of the config (not enumerable).
 */
export interface S3Config {
  bucket: string;
  /** '' or a key prefix ending in '/' (`backups/` for `s3://bucket/backups`). */
  prefix: string;
  /** `S3_ENDPOINT`; undefined for AWS. */
  endpoint: string | undefined;
  region: string;
  forcePathStyle: boolean;
  /** undefined: the SDK's default chain (instance role, shared config). */
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
  /** `S3_OBJECT_LOCK` + `S3_OBJECT_LOCK_DAYS`: every stored snapshot's retention; undefined = off. */
  objectLock?: ObjectLock | undefined;
}

export interface ObjectLock {
  mode: 'GOVERNANCE' | 'COMPLIANCE';
  days: number;
}

/** S3_OBJECT_LOCK=governance|compliance with S3_OBJECT_LOCK_DAYS (1–36500); undefined when unset. */
function parseObjectLock(env: Env, fail: (message: string) => Error): ObjectLock | undefined {
  const mode = nonEmpty(env.S3_OBJECT_LOCK)?.toLowerCase();
  const days = nonEmpty(env.S3_OBJECT_LOCK_DAYS);
  if (mode === undefined) {
    if (days !== undefined)
      throw fail('S3_OBJECT_LOCK_DAYS is set but S3_OBJECT_LOCK is not (governance or compliance)');
    return undefined;
  }
  if (mode !== 'governance' && mode !== 'compliance') {
    throw fail(`S3_OBJECT_LOCK must be governance or compliance, got "${mode}"`);
  }
  if (days === undefined || !/^\d{1,5}$/.test(days) || Number(days) < 1 || Number(days) > 36_500) {
    throw fail(
      `S3_OBJECT_LOCK_DAYS must be a whole number of days from 1 to 36500 with S3_OBJECT_LOCK, got "${days ?? ''}"`,
    );
  }
  return { mode: mode === 'governance' ? 'GOVERNANCE' : 'COMPLIANCE', days: Number(days) };
}

type Env = Record<string, string | undefined>;

/** S3 bucket names: 3–63 of a-z 0-9 . - (AWS's rule; MinIO and Ceph follow it). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const PREFIX_PART = /^[A-Za-z0-9._-]+$/;

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** Parses the S3 settings; undefined when `STORAGE_URL` is unset. Throws `fail(message)`. */
export function parseS3Config(env: Env, fail: (message: string) => Error): S3Config | undefined {
  const url = nonEmpty(env.STORAGE_URL);
  const objectLock = parseObjectLock(env, fail);
  if (url === undefined) {
    if (objectLock) throw fail('S3_OBJECT_LOCK needs a bucket: set STORAGE_URL=s3://BUCKET');
    return undefined;
  }
  const match = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(url);
  if (!match) throw fail(`STORAGE_URL must look like s3://BUCKET or s3://BUCKET/PREFIX, got "${url}"`);
  const bucket = match[1] ?? '';
  if (!BUCKET.test(bucket) || bucket.includes('..')) {
    throw fail(`STORAGE_URL names the bucket "${bucket}": a bucket name is 3 to 63 of a-z 0-9 . -`);
  }
  const segments = (match[2] ?? '').split('/').filter((segment) => segment !== '');
  for (const segment of segments) {
    if (!PREFIX_PART.test(segment) || segment === '.' || segment === '..') {
      throw fail(`STORAGE_URL's prefix may hold only A-Z a-z 0-9 . _ - between slashes, got "${segment}"`);
    }
  }
  const endpoint = nonEmpty(env.S3_ENDPOINT);
  if (endpoint !== undefined && !/^https?:\/\/[^/\s]+\/?$/.test(endpoint)) {
    throw fail(`S3_ENDPOINT must be an http:// or https:// address without a path, got "${endpoint}"`);
  }
  const pathStyle = nonEmpty(env.S3_FORCE_PATH_STYLE)?.toLowerCase();
  if (pathStyle !== undefined && !['true', 'false', '1', '0'].includes(pathStyle)) {
    throw fail(`S3_FORCE_PATH_STYLE must be true or false, got "${pathStyle}"`);
  }
  const accessKeyId = nonEmpty(env.AWS_ACCESS_KEY_ID);
  const secretAccessKey = nonEmpty(env.AWS_SECRET_ACCESS_KEY);
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw fail(
      'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together (or neither, for an instance role)',
    );
  }
  const credentials =
    accessKeyId !== undefined && secretAccessKey !== undefined
      ? hideSecret(accessKeyId, secretAccessKey)
      : undefined;
  return {
    bucket,
    prefix: segments.length > 0 ? `${segments.join('/')}/` : '',
    endpoint: endpoint?.replace(/\/$/, ''),
    region: nonEmpty(env.AWS_REGION) ?? 'us-east-1',
    forcePathStyle:
      pathStyle === undefined ? endpoint !== undefined : pathStyle === 'true' || pathStyle === '1',
    credentials,
    objectLock,
  };
}

function hideSecret(accessKeyId: string, secretAccessKey: string): S3Config['credentials'] {
  const credentials = { accessKeyId } as { accessKeyId: string; secretAccessKey: string };
  Object.defineProperty(credentials, 'secretAccessKey', { value: secretAccessKey, enumerable: false });
  return credentials;
}

/** `s3://bucket/prefix` for logs and /health (no secrets in it). */
export function describeS3(config: S3Config): string {
  return `s3://${config.bucket}/${config.prefix}`;
}
