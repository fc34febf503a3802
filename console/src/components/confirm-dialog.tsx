/**
 * The dialog that asks before an action: what the action does, the API's problem when it
 * failed, then Cancel (or Close) and the confirm button. Every confirm step of the console
 * (rotate, disable / enable, delete, new token, revoke, recover) is one.
 */
import type { ComponentChildren } from 'preact';
import type { ApiProblem } from '../api/client';
import { Dialog, ProblemView } from './ui';

/** The confirm button of a {@link ConfirmDialog}. */
interface ConfirmButton {
  /** Its words, its accessible name (a busy one may say what is happening, e.g. "Creating…"). */
  readonly label: string;
  readonly tone: 'primary' | 'danger';
  /** Runs the action (also on Enter in a field, for a dialog with `form`). */
  readonly onConfirm: () => void;
  /**
   * A request is running: the button says so with `aria-disabled` and stays focusable, so
   * focus stays where it is. Leave it undefined where `disabled` covers the wait.
   */
  readonly busy?: boolean;
  /** The action cannot run (yet): the button is natively disabled. */
  readonly disabled?: boolean;
  /** The id of a text that says what the button will do. */
  readonly describedBy?: string;
}

/** Props of {@link ConfirmDialog}. */
export interface ConfirmDialogProps {
  readonly title: string;
  /** Cancel, Escape and Close all call it. */
  readonly onClose: () => void;
  /** The id of the text that says what confirming does. */
  readonly describedBy?: string;
  /** What confirming does, and any fields it needs. */
  readonly children: ComponentChildren;
  /** The last failure, shown above the buttons. */
  readonly problem: ApiProblem | null;
  /** Shown right after the problem (e.g. a way to follow what caused it). */
  readonly afterProblem?: ComponentChildren;
  readonly confirm: ConfirmButton;
  /** The dismiss button's words. @default 'Cancel' */
  readonly cancelLabel?: 'Cancel' | 'Close';
  /**
   * The body, the problem and the buttons are one form and the confirm button submits it, so
   * Enter in a field confirms (native validation off: the dialog shows its own errors).
   */
  readonly form?: boolean;
  /** Shown under the buttons (a footnote, a status for screen readers). */
  readonly footnote?: ComponentChildren;
}

/** A confirm step: the body, the problem, then Cancel and the confirm button. */
export function ConfirmDialog({
  title,
  onClose,
  describedBy,
  children,
  problem,
  afterProblem,
  confirm,
  cancelLabel = 'Cancel',
  form = false,
  footnote,
}: ConfirmDialogProps) {
  const content = (
    <>
      {children}
      {problem ? <ProblemView problem={problem} /> : null}
      {afterProblem}
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onClose}>
          {cancelLabel}
        </button>
        <button
          type={form ? 'submit' : 'button'}
          class={`button button-${confirm.tone}`}
          onClick={form ? undefined : () => confirm.onConfirm()}
          disabled={confirm.disabled}
          aria-disabled={confirm.busy}
          aria-describedby={confirm.describedBy}
        >
          {confirm.label}
        </button>
      </div>
    </>
  );
  return (
    <Dialog title={title} onClose={onClose} describedBy={describedBy}>
      {form ? (
        <form
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            confirm.onConfirm();
          }}
        >
          {content}
        </form>
      ) : (
        content
      )}
      {footnote}
    </Dialog>
  );
}
