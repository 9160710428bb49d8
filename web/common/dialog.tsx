import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { errorText } from './api.ts';
import { ErrorText } from './ui.tsx';

export interface DialogProps {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
}

/** A dialog form's foot: its error, Cancel, and the submit button (`children` its label). */
export function DialogActions(props: {
  error: string | null;
  busy: boolean;
  onCancel: () => void;
  danger?: boolean;
  children: ComponentChildren;
}) {
  return (
    <>
      <ErrorText error={props.error} />
      <div class="actions">
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="submit" class={props.danger ? 'danger' : 'primary'} disabled={props.busy}>
          {props.children}
        </button>
      </div>
    </>
  );
}

/** A modal dialog (native `<dialog>`: focus trap, Escape closes). Refreshes pause while open. */
export function Dialog({ title, onClose, children }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby="dialog-title"
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      <header class="dialog-head">
        <h2 id="dialog-title">{title}</h2>
        <button type="button" class="icon" aria-label="Close" onClick={onClose}>
          ×
        </button>
      </header>
      {children}
    </dialog>
  );
}

export interface ConfirmProps {
  title: string;
  /** Says exactly what will happen. */
  children: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
}

/** Asks before a destructive action; shows the server's `detail` if it fails. */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  danger = true,
  onConfirm,
  onClose,
}: ConfirmProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <Dialog title={title} onClose={onClose}>
      <form
        method="dialog"
        onSubmit={async (event) => {
          event.preventDefault();
          setBusy(true);
          setError(null);
          try {
            await onConfirm();
            onClose();
          } catch (err) {
            setError(errorText(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <div class="dialog-body">{children}</div>
        <DialogActions error={error} busy={busy} onCancel={onClose} danger={danger}>
          {busy ? 'Working…' : confirmLabel}
        </DialogActions>
      </form>
    </Dialog>
  );
}
