import { ApiError } from '../api.ts';

/** The servers take hook files and certificates up to 1 MiB. */
export const MAX_FILE_BYTES = 1024 * 1024;

/**
 * POSTs one file as multipart/form-data in the form field `field` (the API's JSON helper
 * cannot send files). Failures become an ApiError with the server's `detail`, like every
 * other call; `onUnauthorized` lets the caller re-check the session on a 401.
 */
export async function postFile<T = unknown>(
  url: string,
  field: string,
  file: Blob,
  filename: string,
  onUnauthorized?: () => void,
): Promise<T> {
  if (file.size > MAX_FILE_BYTES) {
    throw new ApiError(
      413,
      `${filename} is larger than 1 MiB; the server takes files up to 1 MiB.`,
      null,
      null,
    );
  }
  const form = new FormData();
  form.append(field, file, filename);
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { Accept: 'application/json' },
      body: form,
    });
  } catch {
    throw new ApiError(
      0,
      'The server cannot be reached. Check that it is running and the network is up.',
      null,
      null,
    );
  }
  const text = await response.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  if (!response.ok) {
    if (response.status === 401) onUnauthorized?.();
    const detail =
      body && typeof body === 'object' && typeof (body as { detail?: unknown }).detail === 'string'
        ? (body as { detail: string }).detail
        : `The server answered ${response.status}.`;
    throw new ApiError(response.status, detail, null, body);
  }
  return body as T;
}
