/**
 * `STORAGE_URL=s3://BUCKET[/PREFIX]` and the standard S3 variables (contract: Storage). The
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
  if (url === undefined) return undefined;
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
