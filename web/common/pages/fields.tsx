import type { ComponentChildren, JSX } from 'preact';
import { FieldFrame, TextControl, type TextControlProps } from '../ui.tsx';

/** A labelled textarea, like ui.tsx's Field. */
export function TextArea(props: TextControlProps<JSX.TextareaHTMLAttributes<HTMLTextAreaElement>>) {
  return <TextControl tag="textarea" spellcheck={false} {...props} />;
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
  return (
    <FieldFrame
      label={label}
      hint={hint}
      control={(ids) => (
        <input
          key={inputKey}
          id={ids.id}
          type="file"
          accept={accept}
          aria-describedby={ids.describedBy}
          onChange={(event) => onFile((event.target as HTMLInputElement).files?.[0] ?? null)}
        />
      )}
    />
  );
}

/** Said once at the top of a section a non-admin can read but not change. */
export function AdminOnlyNote({ what }: { what: string }) {
  return <p class="muted">Only an admin can change {what}.</p>;
}
