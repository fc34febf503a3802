/**
 * A credential shown once (a rotated signing secret, a new API token): the value in a
 * read-only, pre-selected textbox, a copy button, and the warning that it will not be shown
 * again. The value lives only in the caller's dialog state: closing unmounts it, so it is gone
 * from the page and from memory.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { CopyButton, Dialog } from './ui';

/** Props of {@link ShownOnceDialog}. */
export interface ShownOnceProps {
  readonly title: string;
  /** The textbox's label, its accessible name (e.g. "New signing secret"). */
  readonly label: string;
  readonly value: string;
  /** The copy button's name (e.g. "Copy secret"). */
  readonly copyLabel: string;
  /** What to do with it, after "it will not be shown again". */
  readonly advice: string;
  readonly onClose: () => void;
  /** Further facts shown under the value. */
  readonly children?: ComponentChildren;
}

/** The dialog that shows a credential once; "Done" closes it. */
export function ShownOnceDialog({ title, label, value, copyLabel, advice, onClose, children }: ShownOnceProps) {
  const ref = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    // The step before is gone: focus (and select) the value so it can be copied at once.
    ref.current?.focus();
    ref.current?.select();
  }, []);
  return (
    <Dialog title={title} onClose={onClose} describedBy="shown-once-warning">
      <p class="notice" id="shown-once-warning">
        <strong>Copy it now: it will not be shown again.</strong> {advice}
      </p>
      <div class="field">
        <label class="field-label" for="shown-once-value">
          {label}
        </label>
        {/* A textarea, so the whole value shows (wrapped) even on a phone. */}
        <textarea
          id="shown-once-value"
          ref={ref}
          class="secret secret-text"
          rows={2}
          readOnly
          value={value}
          spellcheck={false}
          autoComplete="off"
        />
      </div>
      <div class="row">
        <CopyButton text={value} label={copyLabel} />
      </div>
      {children}
      <div class="dialog-actions">
        <button type="button" class="button button-primary" onClick={onClose}>
          Done
        </button>
      </div>
    </Dialog>
  );
}
