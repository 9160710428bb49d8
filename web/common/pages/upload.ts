import { ApiError, api } from '../api.ts';

/** The servers take hook files and certificates up to 1 MiB. */
export const MAX_FILE_BYTES = 1024 * 1024;

/**
 * POSTs one file as multipart/form-data in the form field `field`. Failures become an
 * ApiError with the server's `detail`, like every other call (a 401 signs out as usual).
 */
export async function postFile<T = unknown>(
  url: string,
  field: string,
  file: Blob,
  filename: string,
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
  return api.post<T>(url, form);
}
