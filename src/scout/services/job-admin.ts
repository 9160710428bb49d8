import { readdir, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { badRequest, conflict, notFound } from '../../core/errors.ts';
import type {
  Browse,
  BrowseEntry,
  ChildFolderList,
  DirectoryList,
  DirectorySaved,
  DirectoryView,
  FolderSizeView,
} from '../../shared/protocol/scout-jobs.ts';
import type { DiscoveredJob } from '../jobs/discovery.ts';
import { createExcluder } from '../jobs/exclude.ts';
import { type JobConfig, MARKER, parseMarker, serializeMarker } from '../jobs/marker.ts';
import { readMarkerText, writeMarkerText } from '../jobs/marker-file.ts';
import { resolveInScanRoot, toRelative } from '../jobs/scan-root.ts';
import { folderSize } from '../jobs/walk.ts';
import type { JobStates } from '../state/job-states.ts';
import { stateView } from '../state/job-states.ts';
import type { JobCatalog } from './job-catalog.ts';

const within = (job: DiscoveredJob, relativePath: string) =>
  job.relative_path === '.' ? relativePath : relativePath.slice(job.relative_path.length + 1);

/** Reading and editing jobs and the folders under the scan root; every path stays inside it. */
export function createJobAdmin(deps: { catalog: JobCatalog; states: JobStates }) {
  const { catalog, states } = deps;
  const scanRoot = catalog.scanRoot;

  async function folder(relativePath: string): Promise<string> {
    const absolute = await resolveInScanRoot(scanRoot, relativePath);
    const info = await stat(absolute).catch(() => null);
    if (!info?.isDirectory()) throw notFound(`${relativePath} is not a folder under the scan root`);
    return absolute;
  }

  async function directoryView(job: DiscoveredJob): Promise<DirectoryView> {
    return {
      relative_path: job.relative_path,
      config: job.config,
      config_error: job.config_error,
      state: stateView(await states.get(job.relative_path)),
    };
  }

  async function requireJob(relativePath: string): Promise<DiscoveredJob> {
    await resolveInScanRoot(scanRoot, relativePath);
    const job = await catalog.byPath(relativePath);
    if (!job) throw notFound(`no backup job at ${relativePath}; save one there first`);
    return job;
  }

  return {
    requireJob,

    async list(): Promise<DirectoryList> {
      const { jobs, discovering } = catalog.snapshot();
      const all = await states.all();
      return {
        discovering,
        directories: jobs.map((job) => ({
          relative_path: job.relative_path,
          config: job.config,
          config_error: job.config_error,
          state: stateView(all.get(job.relative_path)),
        })),
      };
    },

    async children(relativePath: string): Promise<ChildFolderList> {
      const absolute = await folder(relativePath);
      const entries = await readdir(absolute, { withFileTypes: true });
      const jobs = new Set(catalog.snapshot().jobs.map((j) => j.relative_path));
      const directories = entries
        .filter((e) => e.isDirectory())
        .map((e) => toRelative(scanRoot, join(absolute, e.name)))
        .sort()
        .map((rel) => ({ name: basename(rel), relative_path: rel, is_job: jobs.has(rel) }));
      return { relative_path: relativePath, directories };
    },

    async browse(relativePath: string): Promise<Browse> {
      const absolute = await folder(relativePath);
      const job = await catalog.containing(relativePath);
      const excluder = job?.config ? createExcluder(job.config.exclude, job.config.include_hidden) : null;
      const entries: BrowseEntry[] = [];
      for (const entry of await readdir(absolute, { withFileTypes: true })) {
        const rel = toRelative(scanRoot, join(absolute, entry.name));
        const isDir = entry.isDirectory();
        const info = await stat(join(absolute, entry.name)).catch(() => null);
        const reason = job && excluder ? excluder.reason(within(job, rel), isDir) : null;
        entries.push({
          name: entry.name,
          relative_path: rel,
          type: entry.isSymbolicLink() ? 'symlink' : isDir ? 'dir' : 'file',
          size: isDir ? null : (info?.size ?? null),
          mtime: info ? info.mtime.toISOString() : null,
          excluded: reason !== null,
          exclusion_reason: reason,
        });
      }
      entries.sort((a, b) => a.name.localeCompare(b.name));
      return { relative_path: relativePath, job: job?.relative_path ?? null, entries };
    },

    async size(relativePath: string): Promise<FolderSizeView> {
      const { bytes, files } = await folderSize(await folder(relativePath));
      return { relative_path: relativePath, bytes, files };
    },

    /** Creates or rewrites the folder's marker; the answer carries `config_error` when the job is not valid. */
    async save(relativePath: string, config: Partial<JobConfig>): Promise<DirectorySaved> {
      const absolute = await folder(relativePath);
      const others = (await catalog.refresh()).filter((j) => j.relative_path !== relativePath);
      const inside = (parent: string, child: string) => parent === '.' || child.startsWith(`${parent}/`);
      const outer = others.find((j) => inside(j.relative_path, relativePath));
      if (outer)
        throw conflict(
          `${relativePath} is inside the job at ${outer.relative_path}; nested jobs are not supported`,
        );
      const inner = others.find((j) => inside(relativePath, j.relative_path));
      if (inner) {
        throw conflict(
          `${relativePath} contains the job at ${inner.relative_path}; remove that job first or pick another folder`,
        );
      }
      await writeMarkerText(absolute, relativePath, serializeMarker(config));
      const job = await catalog.byPath(relativePath);
      if (!job) throw notFound(`${relativePath} vanished while saving the job`);
      return { directory: await directoryView(job) };
    },

    /** Removes the marker and the local state; files and Station snapshots stay. */
    async remove(
      relativePath: string,
      staged: (row: Awaited<ReturnType<JobStates['get']>>) => string | null,
    ) {
      const job = await requireJob(relativePath);
      const row = await states.get(relativePath);
      const file = staged(row);
      if (file) await rm(file, { force: true });
      await rm(join(job.absolute_path, MARKER), { force: true });
      await states.remove(relativePath);
      await catalog.refresh();
      return { status: 'deleted', relative_path: relativePath };
    },

    /** Adds an exclusion for a file or folder inside a job to that job's marker. */
    async exclude(relativePath: string) {
      const absolute = await resolveInScanRoot(scanRoot, relativePath);
      const info = await stat(absolute).catch(() => null);
      if (!info) throw notFound(`${relativePath} does not exist`);
      const job = await catalog.containing(relativePath);
      if (!job || job.relative_path === relativePath) {
        throw badRequest('relative_path must name a file or folder inside a backup job');
      }
      const text = await readMarkerText(job.absolute_path).catch(() => '');
      const parsed = parseMarker(text, basename(job.absolute_path));
      if (!parsed.config) throw conflict(`the job's marker is not valid (${parsed.error}); fix it first`);
      const pattern = `/${within(job, relativePath)}${info.isDirectory() ? '/' : ''}`;
      const exclude = parsed.config.exclude.includes(pattern)
        ? parsed.config.exclude
        : [...parsed.config.exclude, pattern];
      return this.save(job.relative_path, { ...parsed.config, exclude });
    },
  };
}

export type JobAdmin = ReturnType<typeof createJobAdmin>;
