/**
 * "Authentication" and "Delivery rate" on the endpoint page
 * (docs/behaviour.md#oauth-20-client-credentials, docs/behaviour.md#delivery-rate-per-endpoint).
 * The OAuth 2.0 client secret is write-only: its field starts empty, and left empty keeps the
 * stored one. Each section saves with one PATCH of its own field.
 */
import { useEffect, useState } from 'preact/hooks';
import type { ApiProblem } from '../api/client';
import type { Endpoint } from '../api/contract';
import { RATE_LIMIT_PER_SECOND_BOUNDS } from '../../../lambdas/contract/limits';
import { movesHost } from './new-host-secrets';
import { describedBy, FieldError, issuesAt, OptionSection, useOptionSave } from './option-section';
import { Empty } from './ui';

type OAuth = NonNullable<Endpoint['auth']>;
type AuthField = 'tokenUrl' | 'clientId' | 'clientSecret' | 'scope' | 'audience';
const AUTH_FIELDS: readonly { field: AuthField; label: string; help?: string }[] = [
  { field: 'tokenUrl', label: 'Token URL', help: 'The https address of the token endpoint, under the same rules as the endpoint URL.' },
  { field: 'clientId', label: 'Client ID' },
  { field: 'clientSecret', label: 'Client secret' },
  { field: 'scope', label: 'Scope', help: 'Optional: space-separated scopes to ask for.' },
  { field: 'audience', label: 'Audience', help: 'Optional: for token endpoints that want one.' },
];

type AuthDraft = Record<AuthField, string>;
const draftOf = (auth: OAuth | null): AuthDraft => ({
  tokenUrl: auth?.tokenUrl ?? '',
  clientId: auth?.clientId ?? '',
  // Never filled from what is stored: reads do not carry it.
  clientSecret: '',
  scope: auth?.scope ?? '',
  audience: auth?.audience ?? '',
});

/** A refused auth change as a message per field, plus what concerns none of them. */
function authErrors(problem: ApiProblem): { fields: Partial<Record<AuthField, string>>; rest: string | null } | null {
  const fields: Partial<Record<AuthField, string>> = {};
  const rest: string[] = [];
  const issues = [...issuesAt(problem, 'body.auth'), ...issuesAt(problem, 'body.headers')];
  if (issues.length === 0) return problem.tag === 'InvalidAuth' ? { fields, rest: problem.detail } : null;
  for (const issue of issues) {
    const field = AUTH_FIELDS.find((f) => issue.path === `body.auth.${f.field}` || issue.message.includes(`body.auth.${f.field}`))?.field;
    if (field) fields[field] = fields[field] ? `${fields[field]}; ${issue.message}` : issue.message;
    else rest.push(issue.message);
  }
  return { fields, rest: rest.length ? rest.join('; ') : null };
}

/** The Authentication section, for a caller with webhook:write. */
export function AuthOptions({ endpoint, onSaved }: { endpoint: Endpoint; onSaved: (endpoint: Endpoint) => void }) {
  const { saving, notice, setNotice, problem, setProblem, save } = useOptionSave(endpoint, onSaved);
  const [mode, setMode] = useState<'none' | 'oauth'>(endpoint.auth ? 'oauth' : 'none');
  const [draft, setDraft] = useState<AuthDraft>(() => draftOf(endpoint.auth));
  const [errors, setErrors] = useState<Partial<Record<AuthField, string>>>({});
  const [modeError, setModeError] = useState<string | null>(null);
  const id = `auth-${endpoint.endpointId}`;
  const storedKey = JSON.stringify(endpoint.auth);
  useEffect(() => {
    setMode(endpoint.auth ? 'oauth' : 'none');
    setDraft(draftOf(endpoint.auth));
  }, [storedKey]);

  // A new client needs its secret; so does a token URL on another host (the stored one is never sent there unasked).
  const secretNeeded = !endpoint.auth || movesHost(endpoint.auth.tokenUrl, draft.tokenUrl.trim());

  const focusFirst = (found: Partial<Record<AuthField, string>>) => {
    const first = AUTH_FIELDS.find((f) => found[f.field]);
    setTimeout(() => document.getElementById(first ? `${id}-${first.field}` : `${id}-mode`)?.focus(), 0);
  };

  const submit = async () => {
    setNotice('');
    setProblem(null);
    setModeError(null);
    if (mode === 'none') {
      setErrors({});
      if (!endpoint.auth) {
        setNotice('Nothing to save: the endpoint has no authentication.');
        return;
      }
      const refused = await save({ auth: null }, 'Authentication removed: attempts carry no token.');
      if (refused) setProblem(refused);
      return;
    }
    const local: Partial<Record<AuthField, string>> = {};
    if (draft.tokenUrl.trim() === '') local.tokenUrl = 'Enter the token endpoint’s URL.';
    if (draft.clientId.trim() === '') local.clientId = 'Enter the client ID.';
    if (secretNeeded && draft.clientSecret === '')
      local.clientSecret = endpoint.auth
        ? 'Enter the client secret again: the token URL moves to another host.'
        : 'Enter the client secret.';
    setErrors(local);
    if (Object.keys(local).length > 0) {
      focusFirst(local);
      return;
    }
    const optional = (v: string) => (v.trim() === '' ? undefined : v.trim());
    const scope = optional(draft.scope);
    const audience = optional(draft.audience);
    const refused = await save(
      {
        auth: {
          type: 'oauth2_client_credentials',
          tokenUrl: draft.tokenUrl.trim(),
          clientId: draft.clientId.trim(),
          // Left out of the JSON when empty: the stored secret is kept.
          clientSecret: draft.clientSecret === '' ? undefined : draft.clientSecret,
          ...(scope ? { scope } : {}),
          ...(audience ? { audience } : {}),
        },
      },
      'Authentication saved: attempts carry a token from the token endpoint.',
    );
    if (!refused) {
      setDraft((d) => ({ ...d, clientSecret: '' }));
      return;
    }
    const found = authErrors(refused);
    if (!found) {
      setProblem(refused);
      return;
    }
    setErrors(found.fields);
    setModeError(found.rest);
    focusFirst(found.fields);
  };

  return (
    <OptionSection
      id={id}
      title="Authentication"
      lead="How the receiver knows the request is yours besides the signature: an OAuth 2.0 access token, sent as Authorization: Bearer."
      saving={saving}
      notice={notice}
      problem={problem}
      onSubmit={() => void submit()}
      actions={
        <button type="submit" class="button button-primary" aria-disabled={saving}>
          Save authentication
        </button>
      }
    >
      <div class="field">
        {/* The section's heading says it already; the field keeps the name for assistive technology. */}
        <label class="visually-hidden" for={`${id}-mode`}>
          Authentication
        </label>
        <select
          id={`${id}-mode`}
          class="auth-mode"
          value={mode}
          onChange={(e) => setMode(e.currentTarget.value as 'none' | 'oauth')}
          aria-invalid={modeError ? 'true' : undefined}
          aria-describedby={describedBy(modeError, `${id}-mode-error`)}
        >
          <option value="none">None</option>
          <option value="oauth">OAuth 2.0 client credentials</option>
        </select>
        {modeError ? <FieldError id={`${id}-mode-error`}>{modeError}</FieldError> : null}
      </div>
      {mode === 'none' ? (
        endpoint.auth ? (
          <p class="notice">Saving removes the OAuth 2.0 settings and the stored client secret.</p>
        ) : (
          <Empty title="No authentication">
            <p>Attempts are signed, and carry no token. Choose OAuth 2.0 client credentials when the receiver wants one.</p>
          </Empty>
        )
      ) : (
        <div class="auth-fields">
          {AUTH_FIELDS.map(({ field, label, help }) => {
            const error = errors[field];
            const hint =
              field === 'clientSecret'
                ? secretNeeded
                  ? endpoint.auth
                    ? 'Required: the token URL moves to another host. Stored sealed; never shown again.'
                    : 'Stored sealed; never shown again.'
                  : 'Leave empty to keep the stored secret.'
                : help;
            return (
              <div class="field" key={field}>
                <label class="field-label" for={`${id}-${field}`}>
                  {label}
                </label>
                <input
                  id={`${id}-${field}`}
                  type={field === 'tokenUrl' ? 'url' : 'text'}
                  class={field === 'clientSecret' || field === 'clientId' ? 'mono' : undefined}
                  autoComplete="off"
                  spellcheck={false}
                  value={draft[field]}
                  onInput={(e) => setDraft((d) => ({ ...d, [field]: e.currentTarget.value }))}
                  aria-invalid={error ? 'true' : undefined}
                  aria-describedby={describedBy(error, `${id}-${field}-error`, hint ? `${id}-${field}-help` : undefined)}
                />
                {error ? <FieldError id={`${id}-${field}-error`}>{error}</FieldError> : null}
                {hint ? (
                  <p id={`${id}-${field}-help`} class="field-help">
                    {hint}
                  </p>
                ) : null}
              </div>
            );
          })}
        </div>
      )}
    </OptionSection>
  );
}

/** The Authentication section for a caller without webhook:write: the settings, never a secret (the API redacts the token URL). */
export function AuthSummary({ auth }: { auth: Endpoint['auth'] }) {
  return (
    <OptionSection id="auth-read" title="Authentication">
      {auth ? (
        <dl class="summary">
          <dt>Type</dt>
          <dd>OAuth 2.0 client credentials</dd>
          <dt>Token URL</dt>
          <dd class="mono">{auth.tokenUrl}</dd>
          <dt>Client ID</dt>
          <dd class="mono">{auth.clientId}</dd>
          <dt>Scope</dt>
          <dd>{auth.scope ?? <span class="muted">—</span>}</dd>
          <dt>Audience</dt>
          <dd>{auth.audience ?? <span class="muted">—</span>}</dd>
        </dl>
      ) : (
        <Empty title="No authentication">
          <p>Attempts are signed, and carry no token.</p>
        </Empty>
      )}
    </OptionSection>
  );
}

const { min: RATE_MIN, max: RATE_MAX } = RATE_LIMIT_PER_SECOND_BOUNDS;

/** Why `text` is no rate, or null; empty is "no limit". */
export function rateRefusal(text: string): string | null {
  if (text.trim() === '') return null;
  const n = Number(text);
  return Number.isInteger(n) && n >= RATE_MIN && n <= RATE_MAX
    ? null
    : `Enter a whole number from ${RATE_MIN} to ${RATE_MAX}, or leave it empty for no limit.`;
}

/** The "Requests per second" field, shared by the endpoint page and "New endpoint". */
export function RateField({
  id,
  value,
  onInput,
  error,
}: {
  id: string;
  value: string;
  onInput: (v: string) => void;
  error: string | null;
}) {
  return (
    <div class="field rate-field">
      <label class="field-label" for={id}>
        Requests per second
      </label>
      <input
        id={id}
        type="number"
        inputMode="numeric"
        min={RATE_MIN}
        max={RATE_MAX}
        step={1}
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={describedBy(error, `${id}-error`, `${id}-help`)}
      />
      {error ? <FieldError id={`${id}-error`}>{error}</FieldError> : null}
      <p id={`${id}-help`} class="field-help">
        Empty: no limit. {RATE_MIN}–{RATE_MAX}: at most that many first attempts and retries a second, across every dispatcher; what is over
        waits in the queue without spending a retry.
      </p>
    </div>
  );
}

/** The Delivery rate section, for a caller with webhook:write. */
export function RateOptions({ endpoint, onSaved }: { endpoint: Endpoint; onSaved: (endpoint: Endpoint) => void }) {
  const { saving, notice, setNotice, problem, setProblem, save } = useOptionSave(endpoint, onSaved);
  const stored = endpoint.rateLimitPerSecond;
  const [text, setText] = useState(stored === null ? '' : String(stored));
  const [error, setError] = useState<string | null>(null);
  const id = `rate-${endpoint.endpointId}`;
  useEffect(() => setText(stored === null ? '' : String(stored)), [stored]);

  const submit = async () => {
    setNotice('');
    setProblem(null);
    const bad = rateRefusal(text);
    setError(bad);
    if (bad) {
      document.getElementById(id)?.focus();
      return;
    }
    const next = text.trim() === '' ? null : Number(text);
    if (next === stored) {
      setNotice('Nothing to save: the rate is unchanged.');
      return;
    }
    const refused = await save(
      { rateLimitPerSecond: next },
      next === null ? 'Rate limit removed: no limit.' : `Rate saved: at most ${next} a second.`,
    );
    if (!refused) return;
    const issues = issuesAt(refused, 'body.rateLimitPerSecond');
    if (issues.length) {
      setError(issues.map((i) => i.message).join('; '));
      document.getElementById(id)?.focus();
    } else setProblem(refused);
  };

  return (
    <OptionSection
      id={`${id}-section`}
      title="Delivery rate"
      lead={
        stored === null
          ? 'No limit: attempts go out as fast as the receiver answers. Set one for a receiver that falls over above a few requests a second.'
          : `At most ${stored} requests a second reach this endpoint.`
      }
      saving={saving}
      notice={notice}
      problem={problem}
      onSubmit={() => void submit()}
      actions={
        <button type="submit" class="button button-primary" aria-disabled={saving}>
          Save rate
        </button>
      }
    >
      <RateField id={id} value={text} onInput={setText} error={error} />
    </OptionSection>
  );
}

/** The Delivery rate section for a caller without webhook:write. */
export function RateSummary({ rate }: { rate: number | null }) {
  return (
    <OptionSection id="rate-read" title="Delivery rate">
      <p>{rate === null ? 'No limit: attempts go out as fast as the receiver answers.' : `At most ${rate} requests a second.`}</p>
    </OptionSection>
  );
}
