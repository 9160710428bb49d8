/**
 * Every `/backup/*` address a Scout calls, built in this one place. The Station mounts its
 * routes under the same roots (`BACKUP_ROOTS`), with the rest of each shape in its route file.
 */
export const BACKUP_ROOTS = {
  uploads: '/backup/uploads',
  recovery: '/backup/recovery',
  drills: '/backup/drills',
} as const;

const seg = encodeURIComponent;

export const uploadPaths = {
  initiate: `${BACKUP_ROOTS.uploads}/initiate`,
  chunk: (uploadId: string, offset: number) =>
    `${BACKUP_ROOTS.uploads}/${seg(uploadId)}/chunk?offset=${offset}`,
  finalize: (uploadId: string) => `${BACKUP_ROOTS.uploads}/${seg(uploadId)}/finalize`,
};

/** The recovery and drill addresses of one Scout instance. */
export function instancePaths(scoutId: string, instanceId: string) {
  const recovery = `${BACKUP_ROOTS.recovery}/${seg(scoutId)}/${seg(instanceId)}`;
  const job = (jobName: string) => `${recovery}/${seg(jobName)}`;
  return {
    requests: `${recovery}/requests`,
    jobs: `${recovery}/jobs`,
    request: (id: string) => `${recovery}/requests/${seg(id)}`,
    requestArchive: (id: string) => `${recovery}/requests/${seg(id)}/archive`,
    snapshots: (jobName: string) => `${job(jobName)}/snapshots`,
    latest: (jobName: string) => `${job(jobName)}/latest`,
    byFingerprint: (jobName: string, fp: string) => `${job(jobName)}/by-fingerprint?fp=${seg(fp)}`,
    archive: (jobName: string, filename: string) => `${job(jobName)}/archive/${seg(filename)}`,
    drill: (jobName: string) => `${BACKUP_ROOTS.drills}/${seg(scoutId)}/${seg(instanceId)}/${seg(jobName)}`,
  };
}

export type InstancePaths = ReturnType<typeof instancePaths>;
