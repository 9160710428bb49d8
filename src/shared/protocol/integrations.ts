/** `/api/ntfy`, `/api/hooks` and `/api/certificates` on both roles (src/core/http/routes/integrations.ts). */

/** ntfy settings by field name (`ntfy_url`, `ntfy_topic`, …; a Station's filters too). */
export type NtfySettingsView = Record<string, string>;

/** `GET /api/ntfy`. */
export interface NtfyReply {
  settings: NtfySettingsView;
  default_template: string;
}

/** `POST /api/ntfy/test`: whether the ntfy server took the test message. */
export interface NtfyTestReply {
  status: 'sent' | 'failed';
  http_status: number | null;
  detail: string;
}

/** A hook script or certificate file kept in the data directory. */
export interface StoredFileView {
  filename: string;
  size: number;
  modified_at: string;
}

/** The hook commands: a Station's `pre_command`/`post_command`, a Scout's `hook_pre_command`/`hook_post_command`. */
export interface HookCommandsView {
  pre_command?: string;
  post_command?: string;
  hook_pre_command?: string;
  hook_post_command?: string;
}

/** `GET /api/hooks`: the hook commands and the stored hook files. */
export type HooksReply = HookCommandsView & { files: StoredFileView[] };

/** `GET /api/hooks/files/{filename}`. */
export interface HookFileReply {
  filename: string;
  content: string;
}

/** `POST /api/hooks/files`, `POST /api/certificates/files`: the file saved. */
export interface FileSaved {
  status?: 'saved';
  filename: string;
}

/** One certificate of a CA file. */
export interface CertificateView {
  subject: string;
  issuer: string;
  valid_from: string;
  expires_at: string;
  expired: boolean;
  fingerprint_sha256: string;
}

export interface CertificateFileView {
  filename: string;
  certificates: CertificateView[];
}

/** `GET /api/certificates`. */
export interface CertificateList {
  certificates: CertificateFileView[];
}
