import type { ComponentChildren, JSX } from 'preact';
import { useId, useState } from 'preact/hooks';
import { errorText } from './api.ts';
import { describeCron } from './cron.ts';
import { localTime, relativeTime } from './format.ts';

/** An API error's `detail`, announced to screen readers, shown where it happened. */
export function ErrorText({ error }: { error: string | null | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

/** What a control inside a FieldFrame is given: its id and the id of its hint, if any. */
export interface FieldIds {
  id: string;
  describedBy: string | undefined;
}

/**
 * A label, one control and its hint, tied together by id and aria-describedby. The id is
 * unique per field (useId), so two forms with the same label on one page stay apart.
 */
export function FieldFrame({
  label,
  hint,
  id,
  control,
}: {
  label: string;
  hint?: ComponentChildren;
  id?: string;
  control: (ids: FieldIds) => ComponentChildren;
}) {
  const autoId = useId();
  const fieldId = id ?? autoId;
  const hintId = hint ? `${fieldId}-hint` : undefined;
  return (
    <div class="field">
      <label for={fieldId}>{label}</label>
      {control({ id: fieldId, describedBy: hintId })}
      {hint ? (
        <small id={hintId} class="hint">
          {hint}
        </small>
      ) : null}
    </div>
  );
}

/** A labelled text control's props: its element's attributes, with the text as value and onInput. */
export type TextControlProps<Attributes> = Omit<Attributes, 'label' | 'onInput' | 'value' | 'id'> & {
  id?: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  hint?: ComponentChildren;
};

/** An input or a textarea in a FieldFrame: Field below, TextArea in pages/fields.tsx. */
export function TextControl<Attributes>({
  tag,
  label,
  value,
  onInput,
  hint,
  id,
  ...rest
}: TextControlProps<Attributes> & { tag: 'input' | 'textarea' }) {
  const Tag = tag as 'input';
  return (
    <FieldFrame
      label={label}
      hint={hint}
      id={id}
      control={(ids) => (
        <Tag
          id={ids.id}
          value={value}
          onInput={(event) => onInput((event.target as HTMLInputElement).value)}
          aria-describedby={ids.describedBy}
          {...(rest as JSX.InputHTMLAttributes<HTMLInputElement>)}
        />
      )}
    />
  );
}

/** A labelled input; `hint` is tied to it with aria-describedby. */
export function Field(props: TextControlProps<JSX.InputHTMLAttributes<HTMLInputElement>>) {
  return <TextControl tag="input" {...props} />;
}

export function Checkbox({
  label,
  checked,
  onChange,
}: {
  label: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
}) {
  return (
    <label class="check">
      <input
        type="checkbox"
        checked={checked}
        onChange={(e) => onChange((e.target as HTMLInputElement).checked)}
      />{' '}
      {label}
    </label>
  );
}

/** Copies `text` to the clipboard and says so. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
        } catch {
          // Insecure origins (plain http on a LAN) have no clipboard API: select instead.
          const area = document.createElement('textarea');
          area.value = text;
          document.body.append(area);
          area.select();
          document.execCommand('copy');
          area.remove();
        }
        setCopied(true);
        setTimeout(() => setCopied(false), 2000);
      }}
    >
      {copied ? 'Copied' : label}
    </button>
  );
}

/** A secret shown once, with a copy button and the reason to copy it now. */
export function SecretOnce({
  label,
  secret,
  testId = 'secret',
}: {
  label: string;
  secret: string;
  testId?: string;
}) {
  return (
    <div class="secret">
      <p>
        <strong>{label}</strong> — shown only this once. Copy it now.
      </p>
      <code class="secret-value" data-testid={testId}>
        {secret}
      </code>
      <CopyButton text={secret} />
    </div>
  );
}

export function ProgressBar({ value, max, label }: { value: number; max: number | null; label: string }) {
  return (
    <progress aria-label={label} value={max ? value : undefined} max={max ?? undefined}>
      {max ? `${Math.round((value / max) * 100)}%` : ''}
    </progress>
  );
}

/** A time shown relative ("3 h ago") with the local date and time on hover. */
export function Time({ value }: { value: string | number | null | undefined }) {
  if (value === null || value === undefined || value === '') return <span>—</span>;
  return (
    <time
      dateTime={new Date(typeof value === 'number' && value < 1e12 ? value * 1000 : value).toISOString()}
      title={localTime(value)}
    >
      {relativeTime(value)}
    </time>
  );
}

export function Section({
  title,
  children,
  actions,
}: {
  title: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
  return (
    <section class="card" aria-label={title}>
      <header class="card-head">
        <h2>{title}</h2>
        {actions ? <div class="actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}

/** Runs an async action with a busy flag and its error text, for buttons and forms. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function run<T>(action: () => Promise<T>): Promise<T | undefined> {
    setBusy(true);
    setError(null);
    try {
      return await action();
    } catch (err) {
      setError(errorText(err));
      return undefined;
    } finally {
      setBusy(false);
    }
  }
  return { busy, error, setError, run };
}

/** A table's column headings; `actions` adds the last, unlabelled column of row buttons. */
export function TableHead({ columns, actions = false }: { columns: string[]; actions?: boolean }) {
  return (
    <thead>
      <tr>
        {columns.map((label) => (
          <th key={label} scope="col">
            {label}
          </th>
        ))}
        {actions && (
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        )}
      </tr>
    </thead>
  );
}

/** A cron expression with its plain-words meaning beside it ("0 * * * *" · every hour, on the hour). */
export function Cron({ expression }: { expression: string }) {
  const words = describeCron(expression);
  return (
    <span class="cron">
      <code>{expression}</code>
      {words ? <span class="muted"> · {words}</span> : null}
    </span>
  );
}
