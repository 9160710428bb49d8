import type { ComponentChildren, JSX } from 'preact';
import { useId } from 'preact/hooks';

type TextAreaProps = Omit<JSX.TextareaHTMLAttributes<HTMLTextAreaElement>, 'label' | 'onInput' | 'value'> & {
  label: string;
  value: string;
  onInput: (value: string) => void;
  hint?: ComponentChildren;
};

/** A labelled textarea, like ui.tsx's Field; `hint` is tied to it with aria-describedby. */
export function TextArea({ label, value, onInput, hint, id, ...rest }: TextAreaProps) {
  const autoId = useId();
  const fieldId = id ?? autoId;
  return (
    <div class="field">
      <label for={fieldId}>{label}</label>
      <textarea
        id={fieldId}
        value={value}
        onInput={(event) => onInput((event.target as HTMLTextAreaElement).value)}
        aria-describedby={hint ? `${fieldId}-hint` : undefined}
        spellcheck={false}
        {...rest}
      />
      {hint ? (
        <small id={`${fieldId}-hint`} class="hint">
          {hint}
        </small>
      ) : null}
    </div>
  );
}

/** A labelled file input; calls `onFile` with the chosen file (or null when cleared). */
export function FileField({
  label,
  onFile,
  accept,
  hint,
  inputKey,
}: {
  label: string;
  onFile: (file: File | null) => void;
  accept?: string;
  hint?: ComponentChildren;
  /** Change it to clear the input after an upload. */
  inputKey?: number;
}) {
  const fieldId = useId();
  return (
    <div class="field">
      <label for={fieldId}>{label}</label>
      <input
        key={inputKey}
        id={fieldId}
        type="file"
        accept={accept}
        aria-describedby={hint ? `${fieldId}-hint` : undefined}
        onChange={(event) => onFile((event.target as HTMLInputElement).files?.[0] ?? null)}
      />
      {hint ? (
        <small id={`${fieldId}-hint`} class="hint">
          {hint}
        </small>
      ) : null}
    </div>
  );
}

/** Said once at the top of a section a non-admin can read but not change. */
export function AdminOnlyNote({ what }: { what: string }) {
  return <p class="muted">Only an admin can change {what}.</p>;
}
