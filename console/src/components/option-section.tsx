/**
 * What the endpoint page's delivery-option sections share (docs/behaviour.md#custom-headers and the
 * sections after it): a card with its heading, one PATCH of only the section's field, its
 * "Saving…" / saved line, and the API's problems split into those naming one of the section's
 * fields (shown next to that field) and the rest (a ProblemView under the section).
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { ApiProblem, ProblemIssue } from '../api/client';
import type { BodyOf, Endpoint } from '../api/contract';
import { useSession } from '../session';
import { asProblem } from './load';
import { ProblemView } from './ui';

/** One section's saving state, and its save: one PATCH of `body`, the endpoint answered passed to `onSaved`. */
export function useOptionSave(endpoint: Endpoint, onSaved: (endpoint: Endpoint) => void) {
  const { client } = useSession();
  const [saving, setSaving] = useState(false);
  const [notice, setNotice] = useState('');
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  /** Sends the change; answers the problem when it was refused (the caller places it), else null. */
  const save = async (body: BodyOf<'updateWebhook'>, saved: string): Promise<ApiProblem | null> => {
    if (saving) return null;
    setSaving(true);
    setNotice('');
    setProblem(null);
    try {
      const next = await client.call('updateWebhook', { params: { endpointId: endpoint.endpointId }, body });
      setNotice(saved);
      onSaved(next);
      return null;
    } catch (e) {
      return asProblem(e);
    } finally {
      setSaving(false);
    }
  };
  return { saving, notice, setNotice, problem, setProblem, save };
}

/** The issues of `problem` whose path starts with `prefix` (`body.auth.`), with the detail as one issue when it has none. */
export function issuesAt(problem: ApiProblem, prefix: string): readonly ProblemIssue[] {
  const found = problem.issues.filter((i) => i.path === prefix || i.path.startsWith(prefix));
  if (found.length > 0 || problem.issues.length > 0) return found;
  return problem.detail.includes(prefix) ? [{ path: prefix, message: problem.detail }] : [];
}

/** A field's error line, referenced by the field's `aria-describedby`. */
export function FieldError({ id, children }: { id: string; children: ComponentChildren }) {
  return (
    <p id={id} class="field-error">
      {children}
    </p>
  );
}

/** `aria-describedby` of a field: its error (when shown) then its help. */
export function describedBy(error: unknown, errorId: string, helpId?: string): string | undefined {
  return [error ? errorId : '', helpId ?? ''].filter(Boolean).join(' ') || undefined;
}

/**
 * A section of delivery options: its heading, body, save button row and what the last save said.
 * With `onSubmit`, body and buttons are a form: Enter in one of its fields saves, as its submit button does.
 */
export function OptionSection({
  id,
  title,
  lead,
  children,
  actions,
  after,
  saving,
  notice,
  problem,
  onSubmit,
}: {
  id: string;
  title: string;
  lead?: ComponentChildren;
  children: ComponentChildren;
  actions?: ComponentChildren;
  /** What follows the save row (the filter's test). */
  after?: ComponentChildren;
  saving?: boolean;
  notice?: string;
  problem?: ApiProblem | null;
  onSubmit?: () => void;
}) {
  const body = (
    <>
      {children}
      {problem ? <ProblemView problem={problem} /> : null}
      {actions ? (
        <div class="row form-actions">
          {actions}
          <span class="form-notice" role="status">
            {saving ? 'Saving…' : notice}
          </span>
        </div>
      ) : null}
    </>
  );
  return (
    <section class="card option-section" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`} class="option-title">
        {title}
      </h3>
      {lead ? <p class="field-help option-lead">{lead}</p> : null}
      {onSubmit ? (
        <form
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            onSubmit();
          }}
        >
          {body}
        </form>
      ) : (
        body
      )}
      {after}
    </section>
  );
}
