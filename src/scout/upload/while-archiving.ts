import { type ArchiveEnd, growingArchive } from './archive-source.ts';
import type { StationClient } from './station-client.ts';
import { type Announcement, sendArchive, type UploadTarget } from './uploader.ts';

/**
 * A streamed upload beside the archive pipeline (issue #27): it initiates as soon as its
 * announcement is known (the job's fingerprint comes from a walk that may still run while the
 * archive starts: src/scout/backup/stage.ts), sends each chunk as soon as the pipeline has
 * written it to the staged file (catching up with what was written before), and
 * finalizes with the size and SHA-256 once the archive is complete, so a backup takes about as
 * long as the slower of archiving and uploading instead of both. The pipeline writes the staged
 * file as always: an upload that fails resumes from it in a later cycle, force-send reuses it.
 *
 * The archive's owner reports to it: `onWritten` (bytes written so far), then `complete` (the
 * archive is staged) or `abandon` (cancelled, failed, or not the archive that was announced:
 * the upload stops and sends nothing more; the Station keeps the unfinished bytes out of sight
 * until a newer upload of the job supersedes them or the sweep removes them).
 */
export function uploadWhileArchiving(options: {
  client: StationClient;
  /** What initiation declares, or a promise of it: nothing goes to the Station before it resolves. */
  announce: Announcement | Promise<Announcement>;
  /** Where the archive will be staged (the pipeline writes `<path>.part` first). */
  path: string;
  target: UploadTarget;
  signal: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}) {
  const growing = growingArchive(options.path);
  const stop = new AbortController();
  const signal = AbortSignal.any([options.signal, stop.signal]);
  const settled = announced(options.announce, signal)
    .then((announce) => sendArchive({ ...options, announce, source: growing.source, streamed: true, signal }))
    .then(
      (reply) => ({ reply, error: null }),
      (error: unknown) => ({ reply: null, error }),
    )
    .finally(() => growing.source.close());

  return {
    onWritten: growing.written,
    /** The archive is staged complete: the upload sends what is left and finalizes. */
    complete: (end: ArchiveEnd) => growing.complete(end),
    /** The upload stops (its chunk in flight is abandoned); resolves once it has. */
    async abandon(reason: Error): Promise<void> {
      growing.fail(reason);
      stop.abort(reason);
      await settled;
    },
    /** The Station's answer to finalize, or the error that ended the upload. */
    async result() {
      const outcome = await settled;
      if (outcome.error !== null) throw outcome.error;
      if (!outcome.reply) throw new Error('the streamed upload ended without an answer');
      return outcome.reply;
    },
  };
}

/** The announcement once it is known, or the reason the upload stopped before it was. */
function announced(
  announce: Announcement | Promise<Announcement>,
  signal: AbortSignal,
): Promise<Announcement> {
  if (!(announce instanceof Promise)) return Promise.resolve(announce);
  return new Promise((resolve, reject) => {
    const stop = () => reject(signal.reason);
    if (signal.aborted) return stop();
    signal.addEventListener('abort', stop, { once: true });
    announce.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

export type StreamedUpload = ReturnType<typeof uploadWhileArchiving>;
