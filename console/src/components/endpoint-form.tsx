/**
 * The endpoint settings form, shared by "New endpoint" and the endpoint page: URL, description,
 * event types chosen from the catalogue (each with its description) and enabled; "New endpoint"
 * also offers custom headers, a delivery rate and a payload filter behind "More options" (the
 * endpoint page edits them in their own sections). The API's validation errors are shown on the
 * field they concern; anything else in a ProblemView.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { newIdempotencyKey, type ApiProblem } from '../api/client';
import type { BodyOf, Endpoint, ItemOf } from '../api/contract';
import { useOfferedEventTypes, useSession } from '../session';
import { RateField, rateRefusal } from './auth-options';
import { FilterField, filterError, parseJson } from './filter-options';
import { checkNewRows, HEADER_RULES, headerErrors, newHeaderRow, NewHeaderRows, type NewHeader } from './header-options';
import { asProblem, useLoad } from './load';
import { CLIENT_SECRET_KEY, movesHost, NewHostSecrets, secretHeaderNames } from './new-host-secrets';
import { Loading, ProblemView } from './ui';

/** One entry of the event-type catalogue. */
type EventType = ItemOf<'listEventTypes'>;

/** The fields the form edits (the API's names). */
type Field = 'url' | 'description' | 'eventTypes' | 'enabled' | 'headers' | 'rateLimitPerSecond' | 'filter';

/** What is wrong with each field, in words. */
type FieldErrors = Partial<Record<Field, string>>;

const FIELDS: readonly Field[] = ['url', 'description', 'eventTypes', 'enabled', 'headers', 'rateLimitPerSecond', 'filter'];

/** The fields behind "More options". */
const MORE: readonly Field[] = ['headers', 'rateLimitPerSecond', 'filter'];

/**
 * Splits an API problem into messages for the fields it concerns and what is left for a
 * ProblemView (null when every part of it landed on a field).
 */
function problemToFields(problem: ApiProblem): { errors: FieldErrors; rest: ApiProblem | null } {
  if (problem.tag === 'InvalidWebhookUrl') {
    return { errors: { url: problem.rule ? `${problem.detail} (rule: ${problem.rule})` : problem.detail }, rest: null };
  }
  if (problem.tag === 'UnknownEventType') {
    const names = problem.unknownEventTypes;
    return {
      errors: { eventTypes: names.length ? `Not in the event-type catalogue: ${names.join(', ')}. Choose from the list.` : problem.detail },
      rest: null,
    };
  }
  const onFilter = filterError(problem);
  if (onFilter) return { errors: { filter: onFilter }, rest: null };
  const onHeaders = headerErrors(problem);
  if (onHeaders) {
    const named = [...onHeaders.byName.entries()].map(([name, message]) => (message.includes(name) ? message : `${name}: ${message}`));
    return { errors: { headers: [...named, ...(onHeaders.all ? [onHeaders.all] : [])].join('; ') }, rest: null };
  }
  if (problem.tag === 'ValidationError' && problem.issues.length > 0) {
    const errors: FieldErrors = {};
    let unmapped = false;
    for (const issue of problem.issues) {
      // Paths look like `body.url` or `body.eventTypes.2`.
      const field = issue.path.replace(/^body\./, '').split('.')[0] as Field;
      if (FIELDS.includes(field)) errors[field] = errors[field] ? `${errors[field]}; ${issue.message}` : issue.message;
      else unmapped = true;
    }
    return { errors, rest: unmapped || Object.keys(errors).length === 0 ? problem : null };
  }
  return { errors: {}, rest: problem };
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

/** Props of {@link EndpointForm}. */
export interface EndpointFormProps {
  /** The endpoint to edit; absent to create one. */
  readonly endpoint?: Endpoint;
  /** Called with the endpoint the API answered after a create or a save. */
  readonly onSaved: (endpoint: Endpoint) => void;
}

/**
 * Creates an endpoint ("Create endpoint", with an Idempotency-Key kept for retries of the same
 * submission) or saves the changed fields of one ("Save changes", only those sent).
 */
export function EndpointForm({ endpoint, onSaved }: EndpointFormProps) {
  const { client } = useSession();
  const editing = endpoint !== undefined;
  const catalogue = useLoad(() => client.call('listEventTypes'), [client]);
  const offer = useOfferedEventTypes();

  const [url, setUrl] = useState(endpoint?.url ?? '');
  const [description, setDescription] = useState(endpoint?.description ?? '');
  const [eventTypes, setEventTypes] = useState<readonly string[]>(endpoint?.eventTypes ?? []);
  const [enabled, setEnabled] = useState(endpoint?.enabled ?? true);
  // "More options" of a new endpoint.
  const [headerRows, setHeaderRows] = useState<NewHeader[]>([]);
  const [headerRowErrors, setHeaderRowErrors] = useState<ReadonlyMap<number, string>>(new Map());
  const [rate, setRate] = useState('');
  const [filter, setFilter] = useState('');
  const [moreOpen, setMoreOpen] = useState(false);
  // The secrets given again when the URL moves to another host.
  const [newHost, setNewHost] = useState<Record<string, string>>({});
  const needsSecrets = editing && movesHost(endpoint.url, url.trim()) && (secretHeaderNames(endpoint).length > 0 || endpoint.auth !== null);
  // A field follows the endpoint when the endpoint itself changes (saved here, or an action
  // such as "Disable endpoint"), without dropping unsaved edits of the other fields.
  useEffect(() => {
    if (endpoint) setUrl(endpoint.url);
  }, [endpoint?.url]);
  useEffect(() => {
    if (endpoint) setDescription(endpoint.description ?? '');
  }, [endpoint?.description]);
  useEffect(() => {
    if (endpoint) setEventTypes(endpoint.eventTypes);
  }, [endpoint?.eventTypes.join('\n')]);
  useEffect(() => {
    if (endpoint) setEnabled(endpoint.enabled);
  }, [endpoint?.enabled]);

  const [errors, setErrors] = useState<FieldErrors>({});
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [saving, setSaving] = useState(false);
  const [notice, setNotice] = useState('');
  // The key of the last create attempt and the body it was for: a retry of the same body reuses it.
  const attempt = useRef<{ key: string; body: string } | null>(null);
  const formRef = useRef<HTMLFormElement>(null);

  /** Every type the form offers: the catalogue, then any subscribed type no longer in it. */
  const offered = useMemo<readonly EventType[]>(() => {
    // A portal session limited to some event types is offered only those.
    const items = catalogue.state === 'ready' ? offer(catalogue.data.items) : [];
    const extra = (endpoint?.eventTypes ?? []).filter((name) => !items.some((t) => t.name === name));
    return [
      ...items,
      ...extra.map((name): EventType => ({
        name,
        description: 'Not in the event-type catalogue any more.',
        payloadSchema: {},
        builtIn: false,
      })),
    ];
  }, [catalogue.state, catalogue.data, endpoint?.eventTypes.join('\n')]);

  const focusFirstInvalid = (found: FieldErrors) => {
    const first = FIELDS.find((f) => found[f]);
    if (!first) return;
    if (MORE.includes(first)) setMoreOpen(true);
    const target = formRef.current?.querySelector<HTMLElement>(
      first === 'eventTypes'
        ? 'input[name="eventTypes"]'
        : first === 'headers'
          ? '.header-list input, .new-host-secrets input'
          : first === 'rateLimitPerSecond'
            ? `#${idPrefix}-rate`
            : first === 'filter'
              ? `#${idPrefix}-filter`
              : `[name="${first}"]`,
    );
    // After the render that marks the field.
    setTimeout(() => target?.focus(), 0);
  };

  const fail = (e: unknown) => {
    const refused = asProblem(e);
    const { errors: found, rest } = problemToFields(refused);
    // A header problem with no header field on screen (the page's view of the secrets was stale): shown whole.
    if (editing && found.headers && !needsSecrets) {
      setErrors({});
      setProblem(refused);
      return;
    }
    setErrors(found);
    setProblem(rest);
    focusFirstInvalid(found);
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    if (saving) return;
    setNotice('');
    setProblem(null);
    // The API would refuse these too; saying so here names the field in plain words.
    const local: FieldErrors = {};
    if (url.trim() === '') local.url = 'Enter the URL of your receiver, e.g. https://hooks.example.com/webhooks.';
    if (eventTypes.length === 0) local.eventTypes = 'Choose at least one event type.';
    const rowErrors = editing ? new Map<number, string>() : checkNewRows(headerRows);
    setHeaderRowErrors(rowErrors);
    if (rowErrors.size > 0) local.headers = 'Correct the headers marked below.';
    const rateError = editing ? null : rateRefusal(rate);
    if (rateError) local.rateLimitPerSecond = rateError;
    const parsedFilter = editing || filter.trim() === '' ? null : parseJson(filter, 'The filter');
    if (parsedFilter && !parsedFilter.ok) local.filter = parsedFilter.error;
    setErrors(local);
    if (Object.keys(local).length > 0) {
      focusFirstInvalid(local);
      return;
    }
    const trimmedDescription = description.trim();
    setSaving(true);
    try {
      if (!editing) {
        const headers = Object.fromEntries(headerRows.filter((r) => r.name.trim() !== '').map((r) => [r.name.trim(), r.value]));
        const body = {
          url: url.trim(),
          eventTypes: [...eventTypes],
          enabled,
          ...(trimmedDescription ? { description: trimmedDescription } : {}),
          ...(Object.keys(headers).length ? { headers } : {}),
          ...(rate.trim() === '' ? {} : { rateLimitPerSecond: Number(rate) }),
          ...(parsedFilter?.ok ? { filter: parsedFilter.value } : {}),
        };
        const text = JSON.stringify(body);
        if (attempt.current?.body !== text) attempt.current = { key: newIdempotencyKey(), body: text };
        const created = await client.call('createWebhook', { body, idempotencyKey: attempt.current.key });
        onSaved(created);
        return;
      }
      const changes: BodyOf<'updateWebhook'> = {};
      if (url.trim() !== endpoint.url) changes.url = url.trim();
      if (changes.url !== undefined && needsSecrets) {
        const names = secretHeaderNames(endpoint);
        if (names.length) changes.headers = Object.fromEntries(names.map((n) => [n, newHost[n] ? newHost[n] : null]));
        if (endpoint.auth) {
          const clientSecret = newHost[CLIENT_SECRET_KEY] ?? '';
          if (clientSecret === '') {
            const missing = { headers: 'Enter the OAuth 2.0 client secret for the new host (or remove OAuth 2.0 first).' };
            setErrors(missing);
            focusFirstInvalid(missing);
            return;
          }
          changes.auth = { ...endpoint.auth, clientSecret };
        }
      }
      if ((trimmedDescription || null) !== endpoint.description) changes.description = trimmedDescription || null;
      if (!sameSet(eventTypes, endpoint.eventTypes)) changes.eventTypes = [...eventTypes];
      if (enabled !== endpoint.enabled) changes.enabled = enabled;
      if (Object.keys(changes).length === 0) {
        setNotice('Nothing to save: no field was changed.');
        return;
      }
      const saved = await client.call('updateWebhook', { params: { endpointId: endpoint.endpointId }, body: changes });
      setNotice(`Changes saved (${Object.keys(changes).join(', ')}).`);
      setNewHost({});
      onSaved(saved);
    } catch (e) {
      fail(e);
    } finally {
      setSaving(false);
    }
  };

  const toggle = (name: string, on: boolean) =>
    setEventTypes((before) => (on ? [...before.filter((n) => n !== name), name] : before.filter((n) => n !== name)));
  const idPrefix = editing ? `ep-${endpoint.endpointId}` : 'new-ep';
  const invalid = Object.keys(errors).length > 0;

  return (
    <form
      ref={formRef}
      class="form endpoint-form"
      noValidate
      onSubmit={(e) => void submit(e)}
      aria-describedby={invalid ? `${idPrefix}-summary` : undefined}
    >
      {invalid ? (
        <p id={`${idPrefix}-summary`} class="problem" role="alert">
          The endpoint was not {editing ? 'saved' : 'created'}: correct the {Object.keys(errors).length === 1 ? 'field' : 'fields'} marked
          below.
        </p>
      ) : null}
      <div class="field">
        <label class="field-label" for={`${idPrefix}-url`}>
          URL
        </label>
        <input
          id={`${idPrefix}-url`}
          name="url"
          type="url"
          inputMode="url"
          autoComplete="off"
          spellcheck={false}
          value={url}
          onInput={(e) => setUrl(e.currentTarget.value)}
          aria-invalid={errors.url ? 'true' : undefined}
          aria-describedby={`${errors.url ? `${idPrefix}-url-error ` : ''}${idPrefix}-url-help`}
        />
        {errors.url ? (
          <p id={`${idPrefix}-url-error`} class="field-error">
            {errors.url}
          </p>
        ) : null}
        <p id={`${idPrefix}-url-help`} class="field-help">
          The https address of your receiver. Deliveries are POSTed here, signed with the endpoint's secret.
        </p>
      </div>
      {needsSecrets ? (
        <NewHostSecrets
          endpoint={endpoint}
          idPrefix={idPrefix}
          values={newHost}
          onInput={(key, value) => setNewHost((v) => ({ ...v, [key]: value }))}
          error={errors.headers}
        />
      ) : null}
      <div class="field">
        <label class="field-label" for={`${idPrefix}-description`}>
          Description
        </label>
        <textarea
          id={`${idPrefix}-description`}
          name="description"
          rows={2}
          maxLength={500}
          value={description}
          onInput={(e) => setDescription(e.currentTarget.value)}
          aria-invalid={errors.description ? 'true' : undefined}
          aria-describedby={`${errors.description ? `${idPrefix}-description-error ` : ''}${idPrefix}-description-help`}
        />
        {errors.description ? (
          <p id={`${idPrefix}-description-error`} class="field-error">
            {errors.description}
          </p>
        ) : null}
        <p id={`${idPrefix}-description-help`} class="field-help">
          Optional: what receives these events, for whoever looks at this later.
        </p>
      </div>
      <fieldset class="event-type-choices" aria-describedby={errors.eventTypes ? `${idPrefix}-types-error` : undefined}>
        <legend>Event types</legend>
        {errors.eventTypes ? (
          <p id={`${idPrefix}-types-error`} class="field-error">
            {errors.eventTypes}
          </p>
        ) : null}
        {catalogue.state === 'loading' ? <Loading label="Loading the event-type catalogue…" /> : null}
        {catalogue.state === 'error' ? <ProblemView problem={catalogue.problem} onRetry={() => catalogue.reload()} /> : null}
        {catalogue.state === 'ready' && offered.length === 0 ? <p class="muted">The event-type catalogue is empty.</p> : null}
        <ul class="event-type-list">
          {offered.map((type) => {
            const id = `${idPrefix}-type-${type.name}`;
            return (
              <li key={type.name} class="check">
                <input
                  id={id}
                  type="checkbox"
                  name="eventTypes"
                  value={type.name}
                  checked={eventTypes.includes(type.name)}
                  onChange={(e) => toggle(type.name, e.currentTarget.checked)}
                  aria-describedby={`${id}-description`}
                />
                <span class="check-text">
                  <label for={id} class="mono">
                    {type.name}
                  </label>
                  <span id={`${id}-description`} class="field-help">
                    {type.description}
                  </span>
                </span>
              </li>
            );
          })}
        </ul>
      </fieldset>
      {editing ? null : (
        <details class="more-options" open={moreOpen} onToggle={(e) => setMoreOpen(e.currentTarget.open)}>
          <summary>More options</summary>
          <p class="field-help">Optional; each can be changed later on the endpoint's page, with OAuth 2.0 authentication.</p>
          <fieldset aria-describedby={errors.headers ? `${idPrefix}-headers-error` : `${idPrefix}-headers-help`}>
            <legend>Custom headers</legend>
            {errors.headers ? (
              <p id={`${idPrefix}-headers-error`} class="field-error">
                {errors.headers}
              </p>
            ) : null}
            <ul class="header-list">
              <NewHeaderRows rows={headerRows} onChange={setHeaderRows} errors={headerRowErrors} idPrefix={idPrefix} />
            </ul>
            <button type="button" class="button button-small" onClick={() => setHeaderRows((rows) => [...rows, newHeaderRow()])}>
              Add header
            </button>
            <p id={`${idPrefix}-headers-help`} class="field-help">
              {HEADER_RULES}
            </p>
          </fieldset>
          <RateField id={`${idPrefix}-rate`} value={rate} onInput={setRate} error={errors.rateLimitPerSecond ?? null} />
          <FilterField id={`${idPrefix}-filter`} value={filter} onInput={setFilter} error={errors.filter ?? null} />
        </details>
      )}
      <div class="check enabled-check">
        <input
          id={`${idPrefix}-enabled`}
          type="checkbox"
          name="enabled"
          checked={enabled}
          onChange={(e) => setEnabled(e.currentTarget.checked)}
          aria-describedby={`${idPrefix}-enabled-help`}
        />
        <span class="check-text">
          <label for={`${idPrefix}-enabled`} class="field-label">
            Enabled
          </label>
          <span id={`${idPrefix}-enabled-help`} class="field-help">
            A disabled endpoint is sent nothing: its deliveries are held as failed permanently (endpoint_disabled) and can be recovered
            after it is enabled.
          </span>
        </span>
      </div>
      {problem ? <ProblemView problem={problem} /> : null}
      <div class="row form-actions">
        <button type="submit" class="button button-primary" aria-disabled={saving}>
          {editing ? 'Save changes' : 'Create endpoint'}
        </button>
        <span class="form-notice" role="status">
          {saving ? (editing ? 'Saving…' : 'Creating…') : notice}
        </span>
      </div>
    </form>
  );
}
