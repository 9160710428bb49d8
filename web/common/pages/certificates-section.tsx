import { useState } from 'preact/hooks';
import { integrationPaths } from '../../../src/shared/protocol/api-paths.ts';
import type {
  CertificateList,
  CertificateView,
  FileSaved,
} from '../../../src/shared/protocol/integrations.ts';
import { api } from '../api.ts';
import { ConfirmDialog } from '../dialog.tsx';
import { localTime } from '../format.ts';
import { usePoll } from '../poll.ts';
import { ErrorText, Field, Notice, Section, Time, useAction } from '../ui.tsx';
import { AdminOnlyNote, FileField, TextArea } from './fields.tsx';
import { postFile } from './upload.ts';

const SOON_MS = 30 * 24 * 3600 * 1000;

/** Private CA certificates trusted for outgoing TLS (a Station or ntfy server with its own CA). */
export function CertificatesSection({ isAdmin }: { isAdmin: boolean }) {
  const loaded = usePoll(() => api.get<CertificateList>(integrationPaths.certificates), null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const files = loaded.data?.certificates ?? [];
  return (
    <Section title="Trusted certificates">
      <p class="muted">
        CA certificates (PEM) trusted in addition to the system’s for every outgoing HTTPS connection, e.g. to
        a server with a private CA. Changes apply at once.
      </p>
      {isAdmin ? null : <AdminOnlyNote what="trusted certificates" />}
      {isAdmin ? (
        <ErrorText error={loaded.error} />
      ) : loaded.error ? (
        <p class="muted">This server shows its trusted certificates to admins only.</p>
      ) : null}
      {loaded.data && files.length === 0 ? <p class="muted">No certificates uploaded.</p> : null}
      {files.length > 0 ? (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">File</th>
                <th scope="col">Subject</th>
                <th scope="col">Issuer</th>
                <th scope="col">Expires</th>
                {isAdmin ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {files.flatMap((file) =>
                file.certificates.map((cert, i) => (
                  <tr key={`${file.filename}/${cert.fingerprint_sha256}/${i}`}>
                    {i === 0 ? (
                      <td rowSpan={file.certificates.length}>
                        <code>{file.filename}</code>
                      </td>
                    ) : null}
                    <td class="wrap-anywhere">{cert.subject}</td>
                    <td class="wrap-anywhere">{cert.issuer}</td>
                    <td>
                      <Expiry cert={cert} />
                    </td>
                    {isAdmin && i === 0 ? (
                      <td rowSpan={file.certificates.length}>
                        <button
                          type="button"
                          class="danger"
                          aria-label={`Delete ${file.filename}`}
                          onClick={() => setDeleting(file.filename)}
                        >
                          Delete
                        </button>
                      </td>
                    ) : null}
                  </tr>
                )),
              )}
            </tbody>
          </table>
        </div>
      ) : null}
      {isAdmin ? <UploadCertificate reload={loaded.reload} /> : null}
      {deleting ? (
        <ConfirmDialog
          title={`Delete ${deleting}?`}
          confirmLabel="Delete certificate"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await api.delete(integrationPaths.certificateFile(deleting));
            await loaded.reload();
          }}
        >
          <p>
            The certificates in <code>{deleting}</code> are no longer trusted, from now on: HTTPS connections
            to servers whose certificate only they vouch for fail until you upload them again.
          </p>
        </ConfirmDialog>
      ) : null}
    </Section>
  );
}

function Expiry({ cert }: { cert: CertificateView }) {
  const left = new Date(cert.expires_at).getTime() - Date.now();
  return (
    <>
      {cert.expired ? <span class="badge bad">Expired</span> : null}
      {!cert.expired && left < SOON_MS ? <span class="badge warn">Expires soon</span> : null}{' '}
      <Time value={cert.expires_at} />
      <div class="muted small">{localTime(cert.expires_at)}</div>
    </>
  );
}

function UploadCertificate({ reload }: { reload: () => Promise<void> }) {
  const [mode, setMode] = useState<'file' | 'paste'>('file');
  const [file, setFile] = useState<File | null>(null);
  const [inputKey, setInputKey] = useState(0);
  const [pem, setPem] = useState('');
  const [filename, setFilename] = useState('ca.pem');
  const [uploaded, setUploaded] = useState<string | null>(null);
  const action = useAction();
  return (
    <form
      aria-label="Upload a CA certificate"
      onSubmit={async (event) => {
        event.preventDefault();
        setUploaded(null);
        let blob: Blob;
        let name: string;
        if (mode === 'file') {
          if (!file) return action.setError('Choose a certificate file first.');
          blob = file;
          name = file.name;
        } else {
          if (!pem.trim()) return action.setError('Paste the PEM text of the certificate first.');
          blob = new Blob([pem], { type: 'application/x-pem-file' });
          name = filename.trim();
        }
        const reply = await action.run(() =>
          postFile<FileSaved>(integrationPaths.certificateFiles, 'certificate_file', blob, name),
        );
        if (!reply) return;
        setUploaded(reply.filename);
        setFile(null);
        setInputKey((k) => k + 1);
        setPem('');
        await reload();
      }}
    >
      <h3>Add a CA certificate</h3>
      <fieldset class="choices">
        <legend>Source</legend>
        <div class="row">
          <label class="check">
            <input
              type="radio"
              name="cert-source"
              checked={mode === 'file'}
              onChange={() => setMode('file')}
            />{' '}
            A file
          </label>
          <label class="check">
            <input
              type="radio"
              name="cert-source"
              checked={mode === 'paste'}
              onChange={() => setMode('paste')}
            />{' '}
            Pasted text
          </label>
        </div>
      </fieldset>
      {mode === 'file' ? (
        <FileField
          label="Certificate file"
          accept=".pem,.crt,.cer,application/x-pem-file,application/x-x509-ca-cert"
          onFile={setFile}
          inputKey={inputKey}
          hint="A PEM file (-----BEGIN CERTIFICATE-----); it may hold several CA certificates. A file with the same name is replaced."
        />
      ) : (
        <>
          <TextArea
            id="cert-pem"
            label="Certificate (PEM)"
            value={pem}
            onInput={setPem}
            rows={6}
            placeholder={'-----BEGIN CERTIFICATE-----\n…\n-----END CERTIFICATE-----'}
          />
          <Field
            id="cert-filename"
            label="Save as"
            value={filename}
            onInput={setFilename}
            hint="A file name: letters, digits, “.”, “_” or “-”."
            required
          />
        </>
      )}
      <ErrorText error={action.error} />
      {uploaded ? <Notice>Uploaded {uploaded}; it is trusted from now on.</Notice> : null}
      <button type="submit" disabled={action.busy}>
        Upload certificate
      </button>
    </form>
  );
}
