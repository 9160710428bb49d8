/** Where the console shows a folder: `/jobs/at/<components>`; the scan root is `/jobs/at`. */

export const JOBS = '/jobs';

export function folderUrl(relativePath: string): string {
  if (relativePath === '.' || relativePath === '') return `${JOBS}/at`;
  return `${JOBS}/at/${relativePath.split('/').map(encodeURIComponent).join('/')}`;
}

/** The folder a Jobs sub-path names (`/at/docs/sub` → `docs/sub`), or null for the job list. */
export function folderOf(subPath: string): string | null {
  const match = /^\/at(?:\/(.*))?$/.exec(subPath);
  if (!match) return null;
  const parts = (match[1] ?? '').split('/').filter(Boolean).map(decodeURIComponent);
  return parts.length === 0 ? '.' : parts.join('/');
}

export function baseName(relativePath: string): string {
  return relativePath === '.' ? 'Scan root' : (relativePath.split('/').pop() ?? relativePath);
}

/** The name a job goes by: its `job_name`, or its folder's name while its marker is not valid. */
export function jobLabel(dir: { relative_path: string; config: { job_name: string } | null }): string {
  return dir.config?.job_name ?? baseName(dir.relative_path);
}
