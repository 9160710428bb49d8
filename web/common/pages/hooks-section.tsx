import { useState } from 'preact/hooks';
import { integrationPaths } from '../../../src/shared/protocol/api-paths.ts';
import type {
  FileSaved,
  HookCommandsView,
  HookFileReply,
  HooksReply,
  StoredFileView,
} from '../../../src/shared/protocol/integrations.ts';
import { api } from '../api.ts';
import { ConfirmDialog, Dialog } from '../dialog.tsx';
import { formatBytes } from '../format.ts';
import { usePoll } from '../poll.ts';
import { ErrorText, Notice, Section, TableHead, Time, useAction } from '../ui.tsx';
import { AdminOnlyNote, FileField, TextArea } from './fields.tsx';
import { postFile } from './upload.ts';

/** The Station calls its commands pre_command/post_command, a Scout hook_pre_command/hook_post_command. */
const COMMANDS: Record<keyof HookCommandsView, { label: string; hint: string }> = {
  pre_command: {
    label: 'Before storing a snapshot (pre_command)',
    hint: 'Runs before each uploaded snapshot is stored. It cannot stop the upload.',
  },
  post_command: {
    label: 'After storing a snapshot (post_command)',
    hint: 'Runs after each snapshot is stored.',
  },
  hook_pre_command: {
    label: 'Before each backup job (hook_pre_command)',
    hint: 'Runs before each job is backed up; if it fails or times out, the job is skipped and marked.',
  },
  hook_post_command: {
    label: 'After each backup job (hook_post_command)',
    hint: 'Runs after each job, whatever its outcome; BACKUPD_STATUS says how it went.',
  },
};

/** Hook commands and the hook files they can call. */
export function HooksSection({ isAdmin }: { isAdmin: boolean }) {
  const loaded = usePoll(() => api.get<HooksReply>(integrationPaths.hooks), null);
  return (
    <Section title="Hooks">
      <p class="muted">
        Shell commands (<code>/bin/sh -c</code>) run in the hook-files folder, with a 10-minute limit. The
        event’s facts reach them only as <code>BACKUPD_*</code> environment variables (e.g.{' '}
        <code>BACKUPD_EVENT</code>, <code>BACKUPD_JOB_NAME</code>), never inside the command text.
      </p>
      {isAdmin ? null : <AdminOnlyNote what="hooks" />}
      <ErrorText error={loaded.error} />
      {loaded.data ? <HookCommands data={loaded.data} isAdmin={isAdmin} /> : null}
      {loaded.data ? (
        <HookFiles
          files={loaded.data.files}
          isAdmin={isAdmin}
          // The Station lets only admins read hook files; a Scout any signed-in account.
          mayRead={isAdmin || !('pre_command' in loaded.data)}
          reload={loaded.reload}
        />
      ) : null}
    </Section>
  );
}

function HookCommands({ data, isAdmin }: { data: HooksReply; isAdmin: boolean }) {
  const fields = Object.keys(data).filter((key): key is keyof HookCommandsView => key !== 'files');
  // Taken from the first load only: reloading the file list keeps unsaved edits.
  const [form, setForm] = useState<Record<string, string>>(() =>
    Object.fromEntries(fields.map((key) => [key, String(data[key] ?? '')])),
  );
  const [saved, setSaved] = useState(false);
  const action = useAction();
  return (
    <form
      aria-label="Hook commands"
      onSubmit={async (event) => {
        event.preventDefault();
        setSaved(false);
        const reply = await action.run(() => api.post<Record<string, string>>(integrationPaths.hooks, form));
        if (!reply) return;
        setForm({ ...form, ...reply });
        setSaved(true);
      }}
    >
      <fieldset class="plain" disabled={!isAdmin}>
        <legend class="visually-hidden">Hook commands</legend>
        {fields.map((key) => (
          <TextArea
            key={key}
            id={`hook-${key}`}
            label={COMMANDS[key]?.label ?? key}
            value={form[key] ?? ''}
            onInput={(value) => {
              setSaved(false);
              setForm((prev) => ({ ...prev, [key]: value }));
            }}
            rows={2}
            maxLength={4000}
            placeholder="e.g. ./notify.sh"
            hint={`${COMMANDS[key]?.hint ?? ''} Empty runs nothing.`}
          />
        ))}
        <ErrorText error={action.error} />
        {saved ? <Notice>Hook commands saved.</Notice> : null}
        <button type="submit" class="primary" disabled={action.busy}>
          Save hook commands
        </button>
      </fieldset>
    </form>
  );
}

function HookFiles({
  files,
  isAdmin,
  mayRead,
  reload,
}: {
  files: StoredFileView[];
  isAdmin: boolean;
  mayRead: boolean;
  reload: () => Promise<void>;
}) {
  const [file, setFile] = useState<File | null>(null);
  const [inputKey, setInputKey] = useState(0);
  const [uploaded, setUploaded] = useState<string | null>(null);
  const [viewing, setViewing] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const upload = useAction();
  return (
    <>
      <h3>Hook files</h3>
      <p class="muted">
        Scripts the commands can call by name (e.g. <code>sh ./notify.sh</code>), up to 1 MiB each.
      </p>
      {files.length === 0 ? (
        <p class="muted">No hook files.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <TableHead columns={['File', 'Size', 'Changed', 'Actions']} />
            <tbody>
              {files.map((f) => (
                <tr key={f.filename}>
                  <td>
                    <code>{f.filename}</code>
                  </td>
                  <td>{formatBytes(f.size)}</td>
                  <td>
                    <Time value={f.modified_at} />
                  </td>
                  <td>
                    <div class="actions">
                      {mayRead ? (
                        <button
                          type="button"
                          aria-label={`View ${f.filename}`}
                          onClick={() => setViewing(f.filename)}
                        >
                          View
                        </button>
                      ) : null}
                      {isAdmin ? (
                        <button
                          type="button"
                          class="danger"
                          aria-label={`Delete ${f.filename}`}
                          onClick={() => setDeleting(f.filename)}
                        >
                          Delete
                        </button>
                      ) : null}
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {isAdmin ? (
        <form
          aria-label="Upload a hook file"
          onSubmit={async (event) => {
            event.preventDefault();
            setUploaded(null);
            if (!file) return upload.setError('Choose a file to upload first.');
            const chosen = file;
            const reply = await upload.run(() =>
              postFile<FileSaved>(integrationPaths.hookFiles, 'hook_file', chosen, chosen.name),
            );
            if (!reply) return;
            setUploaded(reply.filename);
            setFile(null);
            setInputKey((k) => k + 1);
            await reload();
          }}
        >
          <FileField
            label="Hook file"
            onFile={setFile}
            inputKey={inputKey}
            hint="Its name is kept: letters, digits, “.”, “_” or “-”. A file with the same name is replaced."
          />
          <ErrorText error={upload.error} />
          {uploaded ? <Notice>Uploaded {uploaded}.</Notice> : null}
          <button type="submit" disabled={upload.busy}>
            Upload hook file
          </button>
        </form>
      ) : null}
      {viewing ? <ViewHookFile filename={viewing} onClose={() => setViewing(null)} /> : null}
      {deleting ? (
        <ConfirmDialog
          title={`Delete ${deleting}?`}
          confirmLabel="Delete hook file"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await api.delete(integrationPaths.hookFile(deleting));
            setUploaded(null);
            await reload();
          }}
        >
          <p>
            The hook file <code>{deleting}</code> is deleted from the server. Hook commands that still call it
            fail from their next run. This cannot be undone.
          </p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}

function ViewHookFile({ filename, onClose }: { filename: string; onClose: () => void }) {
  const file = usePoll(() => api.get<HookFileReply>(integrationPaths.hookFile(filename)), null);
  return (
    <Dialog title={filename} onClose={onClose}>
      <ErrorText error={file.error} />
      {file.data ? <pre class="file-content">{file.data.content}</pre> : null}
    </Dialog>
  );
}
