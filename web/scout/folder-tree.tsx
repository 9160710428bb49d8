import { useEffect, useState } from 'preact/hooks';
import { scoutPaths } from '../../src/shared/protocol/api-paths.ts';
import type { ChildFolder, ChildFolderList, DirectoryView } from '../../src/shared/protocol/scout-jobs.ts';
import { api, errorText } from '../common/api.ts';
import { linkClick } from '../common/router.ts';
import { ErrorText } from '../common/ui.tsx';
import { StatusBadge } from './job-card.tsx';
import { folderUrl } from './paths.ts';

interface NodeProps {
  name: string;
  relativePath: string;
  jobs: Map<string, DirectoryView>;
  open?: boolean;
}

/** A folder and, once expanded, its subfolders (loaded when first opened). */
function FolderNode({ name, relativePath, jobs, open: initiallyOpen = false }: NodeProps) {
  const [open, setOpen] = useState(initiallyOpen);
  const [children, setChildren] = useState<ChildFolder[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!open || children !== null) return;
    api
      .get<ChildFolderList>(scoutPaths.children(relativePath))
      .then((reply) => setChildren(reply.directories))
      .catch((err: unknown) => setError(errorText(err)));
  }, [open, children, relativePath]);
  const job = jobs.get(relativePath);
  return (
    <li>
      <div class="tree-row">
        <button
          type="button"
          class="toggle"
          aria-expanded={open}
          onClick={() => {
            setOpen(!open);
            setError(null);
            if (open) setChildren(null);
          }}
        >
          <span aria-hidden="true">{open ? '▾' : '▸'}</span>
          <span class="visually-hidden">Subfolders of {name}</span>
        </button>
        <a href={folderUrl(relativePath)} onClick={(event) => linkClick(event, folderUrl(relativePath))}>
          {name}
        </a>
        {job ? (
          <>
            <span class="badge">
              job{job.config && job.config.job_name !== name ? `: ${job.config.job_name}` : ''}
            </span>
            <StatusBadge dir={job} />
          </>
        ) : null}
      </div>
      {open ? (
        error ? (
          <ErrorText error={error} />
        ) : children === null ? (
          <p class="muted tree-note">Loading…</p>
        ) : children.length === 0 ? (
          <p class="muted tree-note">No subfolders.</p>
        ) : (
          <ul class="tree">
            {children.map((child) => (
              <FolderNode
                key={child.relative_path}
                name={child.name}
                relativePath={child.relative_path}
                jobs={jobs}
              />
            ))}
          </ul>
        )
      ) : null}
    </li>
  );
}

/** The folders under the scan root, expandable; jobs marked with their last result. */
export function FolderTree({ directories }: { directories: DirectoryView[] }) {
  const jobs = new Map(directories.map((dir) => [dir.relative_path, dir]));
  return (
    <ul class="tree folder-tree">
      <FolderNode name="Scan root" relativePath="." jobs={jobs} open />
    </ul>
  );
}
