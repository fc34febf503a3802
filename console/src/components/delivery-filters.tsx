/**
 * The delivery log's filters (docs/behaviour.md#workspace-delivery-log), named "Status", "Event
 * type", "Endpoint", "From" and "To" (accessible names people's automation relies on), kept in
 * the page URL so a filtered view can be shared. Checkboxes and the endpoint select apply at
 * once; the typed fields apply when their value is complete and valid (after a short pause, on
 * Enter, or with "Apply filters"), so a half-typed value never asks the API.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { DeliveryStatus, Endpoint } from '../api/contract';
import { endpointLabels } from './delivery-parts';
import { DELIVERY_STATUSES, statusText } from './ui';

/** The filters as they are in the URL (raw strings: a bad one is sent, and the API's 400 shown). */
export interface LogFilters {
  readonly statuses: readonly string[];
  readonly eventType: string;
  readonly endpointId: string;
  readonly since: string;
  readonly until: string;
}

/** The URL query keys the filters use; every other key of the page's query is kept as it is. */
export const FILTER_KEYS = ['status', 'eventType', 'endpointId', 'since', 'until'] as const;

/** Reads the filters from a page query. */
export function readFilters(query: URLSearchParams): LogFilters {
  return {
    statuses: (query.get('status') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    eventType: query.get('eventType') ?? '',
    endpointId: query.get('endpointId') ?? '',
    since: query.get('since') ?? '',
    until: query.get('until') ?? '',
  };
}

/** True when any filter narrows the log. */
export function hasFilters(filters: LogFilters): boolean {
  return filters.statuses.length > 0 || Boolean(filters.eventType || filters.endpointId || filters.since || filters.until);
}

/** The same rule as the API's `eventType` filter (lambdas/contract/delivery-log.ts EVENT_TYPE_FILTER; no value import from the server side). */
const EVENT_TYPE_FILTER = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*\.(\*|[a-z][a-z0-9_]*)$/;

/** How long a typed value rests before it is applied. */
const SETTLE_MS = 450;

/** `2026-11-25T13:05` (local, as `datetime-local` shows it) for an ISO instant; '' when it does not parse. */
function isoToLocalInput(iso: string): string {
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(iso) ? `${iso}T00:00:00Z` : iso);
  if (!Number.isFinite(ms)) return '';
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * The ISO instant of a `datetime-local` value (the reader's time zone); `endOfMinute` makes "To"
 * include the whole minute shown. '' for an empty value, null while it is incomplete.
 */
function localInputToIso(value: string, endOfMinute: boolean): string | null {
  if (!value) return '';
  const ms = new Date(value).getTime();
  if (!Number.isFinite(ms)) return null;
  return new Date(ms + (endOfMinute ? 59_999 : 0)).toISOString();
}

/** Event-type suggestions: every catalogue type, and each dotted prefix as `prefix.*`. */
function eventTypeSuggestions(names: readonly string[]): string[] {
  const prefixes = new Set<string>();
  for (const name of names) {
    const parts = name.split('.');
    for (let i = 1; i < parts.length; i++) prefixes.add(`${parts.slice(0, i).join('.')}.*`);
  }
  return [...[...prefixes].sort(), ...[...names].sort()];
}

interface FiltersProps {
  readonly filters: LogFilters;
  /** Writes new filters to the URL. */
  readonly onChange: (next: LogFilters) => void;
  /** The workspace's endpoints for the "Endpoint" select; omitted when the log is fixed to one endpoint. */
  readonly endpoints?: readonly Endpoint[];
  /** The endpoint list could not be loaded (the select then offers ids only). */
  readonly endpointsFailed?: boolean;
  readonly eventTypes: readonly string[];
  /** Offer "Clear filters" (when filters are set); off while the log's own state offers it. */
  readonly showClear?: boolean;
  /** Shown beside the filters (refresh). */
  readonly actions?: ComponentChildren;
}

/** The filter form of the delivery log. */
export function DeliveryFilters({ filters, onChange, endpoints, endpointsFailed, eventTypes, showClear = true, actions }: FiltersProps) {
  const [eventType, setEventType] = useState(filters.eventType);
  const [from, setFrom] = useState(() => isoToLocalInput(filters.since));
  const [to, setTo] = useState(() => isoToLocalInput(filters.until));
  const id = useRef(`dlf-${Math.random().toString(36).slice(2, 8)}`).current;

  // The URL changed under the form (clear, back, a shared link): show what it says now.
  useEffect(() => setEventType(filters.eventType), [filters.eventType]);
  useEffect(() => setFrom(isoToLocalInput(filters.since)), [filters.since]);
  useEffect(() => setTo(isoToLocalInput(filters.until)), [filters.until]);

  const eventTypeValid = eventType === '' || EVENT_TYPE_FILTER.test(eventType.trim());
  const typed = (): LogFilters | null => {
    const since = localInputToIso(from, false);
    const until = localInputToIso(to, true);
    if (!eventTypeValid || since === null || until === null) return null;
    return {
      ...filters,
      eventType: eventType.trim(),
      since: from === isoToLocalInput(filters.since) ? filters.since : since,
      until: to === isoToLocalInput(filters.until) ? filters.until : until,
    };
  };
  const applyTyped = () => {
    const next = typed();
    if (next && (next.eventType !== filters.eventType || next.since !== filters.since || next.until !== filters.until)) onChange(next);
  };

  // Typed fields apply once they rest on a complete, valid value.
  const latest = useRef(applyTyped);
  latest.current = applyTyped;
  useEffect(() => {
    const timer = setTimeout(() => latest.current(), SETTLE_MS);
    return () => clearTimeout(timer);
  }, [eventType, from, to]);

  const toggleStatus = (status: DeliveryStatus, on: boolean) => {
    // Values the console does not know (from an edited URL) are dropped on the first edit.
    const known = filters.statuses.filter((s): s is DeliveryStatus => (DELIVERY_STATUSES as readonly string[]).includes(s) && s !== status);
    const statuses = on ? [...known, status] : known;
    onChange({ ...filters, statuses: DELIVERY_STATUSES.filter((s) => statuses.includes(s)) });
  };

  const labels = endpointLabels(endpoints ?? []);
  const label = (e: Endpoint) => labels.get(e.endpointId) ?? e.url;
  const sortedEndpoints = endpoints ? [...endpoints].sort((a, b) => label(a).localeCompare(label(b))) : undefined;
  const unknownEndpoint = sortedEndpoints && filters.endpointId && !sortedEndpoints.some((e) => e.endpointId === filters.endpointId);

  return (
    <form
      class="delivery-filters"
      role="search"
      aria-label="Delivery filters"
      onSubmit={(e) => {
        e.preventDefault();
        applyTyped();
      }}
    >
      <fieldset class="delivery-filters-status">
        <legend>Status</legend>
        <div class="delivery-filters-checks">
          {DELIVERY_STATUSES.map((status) => (
            <label class="check" key={status}>
              <input
                type="checkbox"
                checked={filters.statuses.includes(status)}
                onChange={(e) => toggleStatus(status, e.currentTarget.checked)}
              />
              <span>{statusText(status)}</span>
            </label>
          ))}
        </div>
      </fieldset>
      <div class="delivery-filters-fields">
        <div class="field">
          <label class="field-label" for={`${id}-type`}>
            Event type
          </label>
          <input
            id={`${id}-type`}
            type="text"
            list={`${id}-types`}
            value={eventType}
            autoComplete="off"
            spellcheck={false}
            aria-invalid={eventTypeValid ? undefined : 'true'}
            aria-describedby={`${id}-type-help`}
            onInput={(e) => setEventType(e.currentTarget.value)}
          />
          <datalist id={`${id}-types`}>
            {eventTypeSuggestions(eventTypes).map((name) => (
              <option key={name} value={name} />
            ))}
          </datalist>
          <span id={`${id}-type-help`} class={eventTypeValid ? 'field-help' : 'field-error'}>
            {eventTypeValid
              ? 'Exact, or a prefix such as order.*'
              : 'Not applied: use a type such as order.shipped, or a prefix ending in .* such as order.*'}
          </span>
        </div>
        {sortedEndpoints ? (
          <div class="field">
            <label class="field-label" for={`${id}-endpoint`}>
              Endpoint
            </label>
            <select
              id={`${id}-endpoint`}
              value={filters.endpointId}
              onChange={(e) => onChange({ ...filters, endpointId: e.currentTarget.value })}
              aria-describedby={endpointsFailed ? `${id}-endpoint-help` : undefined}
            >
              <option value="">All endpoints</option>
              {unknownEndpoint ? <option value={filters.endpointId}>{filters.endpointId}</option> : null}
              {sortedEndpoints.map((endpoint) => (
                // Named as everywhere but the endpoint list: its description, else its host (the id added when two read the same).
                <option key={endpoint.endpointId} value={endpoint.endpointId}>
                  {label(endpoint)}
                </option>
              ))}
            </select>
            {endpointsFailed ? (
              <span id={`${id}-endpoint-help`} class="field-error">
                The endpoint list could not be loaded.
              </span>
            ) : null}
          </div>
        ) : null}
        <div class="field">
          <label class="field-label" for={`${id}-from`}>
            From
          </label>
          <input
            id={`${id}-from`}
            type="datetime-local"
            value={from}
            aria-describedby={`${id}-tz`}
            onInput={(e) => setFrom(e.currentTarget.value)}
            onChange={(e) => setFrom(e.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label class="field-label" for={`${id}-to`}>
            To
          </label>
          <input
            id={`${id}-to`}
            type="datetime-local"
            value={to}
            aria-describedby={`${id}-tz`}
            onInput={(e) => setTo(e.currentTarget.value)}
            onChange={(e) => setTo(e.currentTarget.value)}
          />
        </div>
      </div>
      <p id={`${id}-tz`} class="field-help delivery-filters-note">
        Times are your local time ({Intl.DateTimeFormat().resolvedOptions().timeZone}); From and To include the minutes shown.
      </p>
      <div class="row delivery-filters-actions">
        <button type="submit" class="button button-small">
          Apply filters
        </button>
        {showClear && hasFilters({ ...filters, endpointId: endpoints ? filters.endpointId : '' }) ? (
          <button
            type="button"
            class="button button-small button-quiet"
            onClick={() => {
              setEventType('');
              setFrom('');
              setTo('');
              onChange({ statuses: [], eventType: '', endpointId: '', since: '', until: '' });
            }}
          >
            Clear filters
          </button>
        ) : null}
        {actions}
      </div>
    </form>
  );
}
