/**
 * "Custom headers" (docs/behaviour.md#custom-headers): the headers every attempt carries. Plain
 * values are shown to write scope; a secret one reads back as `<redacted>`, so it is shown as
 * "Set — hidden" with "Replace" (an empty field, never filled with anything stored). Added,
 * replaced and removed headers go in one PATCH of `headers` (a removed one as `null`); a refusal
 * naming a header is shown on that header's row.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiProblem } from '../api/client';
import type { Endpoint } from '../api/contract';
import { plural } from '../plural';
import { CUSTOM_HEADER_LIMITS, REDACTED } from '../../../lambdas/contract/limits';
import { describedBy, FieldError, issuesAt, OptionSection, useOptionSave } from './option-section';
import { Empty } from './ui';

/** A header being added. */
export interface NewHeader {
  readonly key: number;
  readonly name: string;
  readonly value: string;
}

let nextKey = 0;
/** An empty row for "Add header". */
export const newHeaderRow = (): NewHeader => ({ key: ++nextKey, name: '', value: '' });

/** What the rules say, under the rows (the API refuses the rest, naming the header). */
export const HEADER_RULES = `At most ${CUSTOM_HEADER_LIMITS.maxHeaders} headers. Names the service sets (webhook-*, content-type, user-agent, x-trace-id…) are refused. A value whose name is authorization or cookie, or contains key, token, secret or password, is a secret: stored sealed and never shown again.`;

/** The header a problem's issue path names (`body.headers["X-Api-Key"]`), or null for the headers as a whole. */
function headerOfPath(path: string): string | null {
  const m = /^body\.headers\[(".*")\]$/.exec(path);
  if (!m) return null;
  try {
    return JSON.parse(m[1]!) as string;
  } catch {
    return null;
  }
}

/** A refused header change split by header (lower-case name → message) and what concerns them all. */
export function headerErrors(problem: ApiProblem): { byName: Map<string, string>; all: string | null } | null {
  const issues = issuesAt(problem, 'body.headers');
  if (issues.length === 0) return null;
  const byName = new Map<string, string>();
  const all: string[] = [];
  for (const issue of issues) {
    const name = headerOfPath(issue.path);
    if (name === null) all.push(issue.message);
    else byName.set(name.toLowerCase(), issue.message);
  }
  return { byName, all: all.length ? all.join('; ') : null };
}

/** Checks rows before sending: a name is needed, and so is a value (an empty row is left out). */
export function checkNewRows(rows: readonly NewHeader[]): Map<number, string> {
  const errors = new Map<number, string>();
  for (const row of rows) {
    if (row.name.trim() === '' && row.value !== '') errors.set(row.key, 'Enter the header name, or discard the row.');
    else if (row.name.trim() !== '' && row.value === '') errors.set(row.key, `Enter the value of ${row.name.trim()}, or discard the row.`);
  }
  return errors;
}

/** The rows "Add header" made: a name and a value each, and "Discard" to drop one. */
export function NewHeaderRows({
  rows,
  onChange,
  errors,
  idPrefix,
}: {
  rows: readonly NewHeader[];
  onChange: (rows: NewHeader[]) => void;
  errors: ReadonlyMap<number, string>;
  idPrefix: string;
}) {
  const set = (key: number, patch: Partial<NewHeader>) => onChange(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  return (
    <>
      {rows.map((row) => {
        const id = `${idPrefix}-new-${row.key}`;
        const error = errors.get(row.key);
        return (
          <li key={row.key} class="header-row header-row-new">
            <div class="field">
              <label class="field-label" for={`${id}-name`}>
                Header name
              </label>
              <input
                id={`${id}-name`}
                class="mono"
                autoComplete="off"
                spellcheck={false}
                value={row.name}
                placeholder="X-Tenant"
                onInput={(e) => set(row.key, { name: e.currentTarget.value })}
                aria-invalid={error ? 'true' : undefined}
                aria-describedby={describedBy(error, `${id}-error`)}
                data-header-key={row.key}
              />
            </div>
            <div class="field">
              <label class="field-label" for={`${id}-value`}>
                Header value
              </label>
              <input
                id={`${id}-value`}
                class="mono"
                autoComplete="off"
                spellcheck={false}
                value={row.value}
                onInput={(e) => set(row.key, { value: e.currentTarget.value })}
                aria-invalid={error ? 'true' : undefined}
                aria-describedby={describedBy(error, `${id}-error`)}
              />
            </div>
            <div class="header-row-actions">
              <button
                type="button"
                class="button button-small"
                onClick={() => onChange(rows.filter((r) => r.key !== row.key))}
                aria-label={`Discard new header ${row.name.trim()}`.trim()}
              >
                Discard
              </button>
            </div>
            {error ? <FieldError id={`${id}-error`}>{error}</FieldError> : null}
          </li>
        );
      })}
    </>
  );
}

/** One stored header and what the draft does to it. */
interface StoredRow {
  readonly name: string;
  readonly secret: boolean;
  /** The stored value (a plain header's; `<redacted>` for a secret one). */
  readonly value: string;
  /** The new value being typed, when "Replace" was chosen. */
  readonly replacement: string | null;
  readonly removed: boolean;
}

const storedRows = (headers: Readonly<Record<string, string>>): StoredRow[] =>
  Object.entries(headers)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, value]) => ({ name, value, secret: value === REDACTED, replacement: null, removed: false }));

/** The section, for a caller with webhook:write. */
export function HeaderOptions({ endpoint, onSaved }: { endpoint: Endpoint; onSaved: (endpoint: Endpoint) => void }) {
  const { saving, notice, setNotice, problem, setProblem, save } = useOptionSave(endpoint, onSaved);
  const [stored, setStored] = useState(() => storedRows(endpoint.headers));
  const [added, setAdded] = useState<NewHeader[]>([]);
  const [rowErrors, setRowErrors] = useState<ReadonlyMap<number, string>>(new Map());
  const [storedErrors, setStoredErrors] = useState<ReadonlyMap<string, string>>(new Map());
  const [allError, setAllError] = useState<string | null>(null);
  const listRef = useRef<HTMLUListElement>(null);
  const idPrefix = `hdr-${endpoint.endpointId}`;
  // The stored headers changed (this section saved, or another did): start over from them.
  const storedKey = JSON.stringify(endpoint.headers);
  useEffect(() => {
    setStored(storedRows(endpoint.headers));
  }, [storedKey]);

  const update = (name: string, patch: Partial<StoredRow>) =>
    setStored((rows) => rows.map((r) => (r.name === name ? { ...r, ...patch } : r)));
  const focusLater = (selector: string) => setTimeout(() => listRef.current?.querySelector<HTMLElement>(selector)?.focus(), 0);

  const add = () => {
    const row = newHeaderRow();
    setAdded((rows) => [...rows, row]);
    focusLater(`[data-header-key="${row.key}"]`);
  };

  const submit = async () => {
    setNotice('');
    setProblem(null);
    setAllError(null);
    setStoredErrors(new Map());
    const local = checkNewRows(added);
    setRowErrors(local);
    if (local.size > 0) {
      focusLater('[aria-invalid="true"]');
      return;
    }
    const change: Record<string, string | null> = {};
    for (const row of stored) {
      if (row.removed) change[row.name] = null;
      else if (row.replacement !== null && row.replacement !== '' && (row.secret || row.replacement !== row.value))
        change[row.name] = row.replacement;
    }
    for (const row of added) if (row.name.trim() !== '') change[row.name.trim()] = row.value;
    const names = Object.keys(change);
    if (names.length === 0) {
      setNotice('Nothing to save: no header was added, replaced or removed.');
      return;
    }
    const refused = await save({ headers: change }, `Headers saved (${names.join(', ')}).`);
    if (!refused) {
      // Saved: a replaced value's field closes (a secret's stored value reads the same as before).
      setAdded([]);
      setStored((rows) => rows.filter((r) => !r.removed).map((r) => ({ ...r, replacement: null })));
      return;
    }
    const found = headerErrors(refused);
    if (!found) {
      setProblem(refused);
      return;
    }
    const forAdded = new Map<number, string>();
    for (const row of added) {
      const message = found.byName.get(row.name.trim().toLowerCase());
      if (message) forAdded.set(row.key, message);
    }
    // A name both added and stored: the row being added is the one to correct.
    const addedNames = new Set(added.map((r) => r.name.trim().toLowerCase()));
    const forStored = new Map<string, string>();
    for (const row of stored) {
      const message = found.byName.get(row.name.toLowerCase());
      if (message && !addedNames.has(row.name.toLowerCase())) forStored.set(row.name, message);
    }
    setRowErrors(forAdded);
    setStoredErrors(forStored);
    setAllError(found.all ?? (forAdded.size || forStored.size ? null : refused.detail));
    focusLater('[aria-invalid="true"]');
  };

  const count = stored.length;
  return (
    <OptionSection
      id={idPrefix}
      title="Custom headers"
      lead="Sent on every attempt, beside the signature headers: an API key your receiver's gateway wants, a tenant id."
      saving={saving}
      notice={notice}
      problem={problem}
      onSubmit={() => void submit()}
      actions={
        <>
          <button type="button" class="button" onClick={add}>
            Add header
          </button>
          <button type="submit" class="button button-primary" aria-disabled={saving}>
            Save headers
          </button>
        </>
      }
    >
      {count === 0 && added.length === 0 ? (
        <Empty title="No custom headers">
          <p>Each attempt carries only the signature headers. Use “Add header” for one your receiver expects.</p>
        </Empty>
      ) : null}
      <ul class="header-list" ref={listRef} aria-label={count ? plural(count, 'custom header') : undefined}>
        {stored.map((row) => {
          const error = storedErrors.get(row.name);
          const valueId = `${idPrefix}-value-${row.name}`;
          return (
            <li key={row.name} class={`header-row${row.removed ? ' is-removed' : ''}`}>
              <span class="header-name mono">{row.name}</span>
              <span class="header-value">
                {row.replacement !== null ? (
                  <>
                    <label class="visually-hidden" for={valueId}>
                      New value of {row.name}
                    </label>
                    <input
                      id={valueId}
                      class="mono"
                      autoComplete="off"
                      spellcheck={false}
                      value={row.replacement}
                      onInput={(e) => update(row.name, { replacement: e.currentTarget.value })}
                      aria-invalid={error ? 'true' : undefined}
                      aria-describedby={describedBy(error, `${valueId}-error`)}
                    />
                  </>
                ) : row.removed ? (
                  <span class="muted">Removed when you save</span>
                ) : row.secret ? (
                  <span class="badge badge-secret">Set — hidden</span>
                ) : (
                  <span class="mono wrap">{row.value}</span>
                )}
              </span>
              <span class="header-row-actions">
                {row.removed ? (
                  <button type="button" class="button button-small" onClick={() => update(row.name, { removed: false })}>
                    Keep header {row.name}
                  </button>
                ) : (
                  <>
                    {row.replacement === null ? (
                      <button
                        type="button"
                        class="button button-small"
                        aria-label={`Replace value of ${row.name}`}
                        onClick={() => {
                          // A secret's field starts empty: nothing stored is ever put in the page.
                          update(row.name, { replacement: row.secret ? '' : row.value });
                          focusLater(`[id="${valueId}"]`);
                        }}
                      >
                        Replace
                      </button>
                    ) : (
                      <button type="button" class="button button-small" onClick={() => update(row.name, { replacement: null })}>
                        Keep value
                      </button>
                    )}
                    <button
                      type="button"
                      class="button button-small button-danger-outline"
                      aria-label={`Remove header ${row.name}`}
                      onClick={() => update(row.name, { removed: true, replacement: null })}
                    >
                      Remove
                    </button>
                  </>
                )}
              </span>
              {error ? <FieldError id={`${valueId}-error`}>{error}</FieldError> : null}
            </li>
          );
        })}
        <NewHeaderRows rows={added} onChange={setAdded} errors={rowErrors} idPrefix={idPrefix} />
      </ul>
      {allError ? (
        <p class="field-error" role="alert">
          {allError}
        </p>
      ) : null}
      <p class="field-help">{HEADER_RULES}</p>
    </OptionSection>
  );
}

/** The section for a caller without webhook:write: the names only (the API redacts every value for it). */
export function HeaderNames({ headers }: { headers: Readonly<Record<string, string>> }) {
  const names = Object.keys(headers).sort((a, b) => a.localeCompare(b));
  return (
    <OptionSection id="hdr-read" title="Custom headers">
      {names.length === 0 ? (
        <Empty title="No custom headers">
          <p>Each attempt carries only the signature headers.</p>
        </Empty>
      ) : (
        <>
          <ul class="header-names">
            {names.map((name) => (
              <li key={name} class="mono">
                {name}
              </li>
            ))}
          </ul>
          <p class="field-help">Their values are shown only with the webhook:write permission; secret ones never.</p>
        </>
      )}
    </OptionSection>
  );
}
