/** Pieces the delivery log and the delivery page share: the endpoint directory, links and failure reasons in words. */
import type { DeliveryStatus, Endpoint } from '../api/contract';
import { href } from '../router';
import { useSession } from '../session';
import { useLoad } from './load';
import { Time } from './ui';
import { explainFailure } from '../failure-reasons';

/** At most this many endpoint pages are read for the directory (200 each). */
const MAX_ENDPOINT_PAGES = 25;

/** Every endpoint of the workspace (paged through), to name endpoints and offer them as a filter. */
export function useEndpointDirectory(enabled = true) {
  const { client } = useSession();
  return useLoad(async () => {
    if (!enabled) return [] as Endpoint[];
    const all: Endpoint[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_ENDPOINT_PAGES; page++) {
      const answer = await client.call('listWebhooks', { query: { limit: 200, cursor } });
      all.push(...answer.items);
      if (!answer.nextCursor) break;
      cursor = answer.nextCursor;
    }
    return all;
  }, [client, enabled]);
}

/**
 * How the console names an endpoint outside its own list: its description, else its URL's host
 * (a read-scope token sees only `scheme://host/…`). The endpoint list keeps the URL itself.
 */
export function endpointLabel(endpoint: Pick<Endpoint, 'url' | 'description'>): string {
  const description = endpoint.description?.trim();
  if (description) return description;
  try {
    return new URL(endpoint.url).host || endpoint.url;
  } catch {
    return endpoint.url;
  }
}

/** Labels for a list of endpoints: {@link endpointLabel}, with the id added where two would read the same. */
export function endpointLabels(endpoints: readonly Endpoint[]): Map<string, string> {
  const counts = new Map<string, number>();
  for (const e of endpoints) counts.set(endpointLabel(e), (counts.get(endpointLabel(e)) ?? 0) + 1);
  return new Map(
    endpoints.map((e) => {
      const label = endpointLabel(e);
      return [e.endpointId, (counts.get(label) ?? 0) > 1 ? `${label} (${e.endpointId})` : label];
    }),
  );
}

/** A link to an endpoint by its label (its URL in the tooltip), or by its id while the endpoint is unknown. */
export function EndpointLink({ endpointId, endpoint, label }: { endpointId: string; endpoint?: Endpoint | null; label?: string }) {
  return (
    <a href={href(`endpoints/${endpointId}`)} class={endpoint ? 'delivery-url' : 'mono'} title={endpoint?.url}>
      {endpoint ? breakable(label ?? endpointLabel(endpoint)) : endpointId}
    </a>
  );
}

/** A URL that may wrap after its separators (not inside `://`), so a narrow column breaks it where it reads well. */
function breakable(url: string) {
  return url.split(/(?<=[^:/]\/|[.?&#=])/).map((part, i) => (i === 0 ? part : [<wbr key={i} />, part]));
}

/** A link to a delivery by its id (the log's rows, `replayedFrom`, a replay's new delivery). */
export function DeliveryLink({ deliveryId }: { deliveryId: string }) {
  return (
    <a href={href(`deliveries/${deliveryId}`)} class="mono">
      {deliveryId}
    </a>
  );
}

/** A failure code with its explanation; `compact` (a table cell) puts the words under the code, smaller. */
export function FailureReason({ reason, compact }: { reason: string | null; compact?: boolean }) {
  if (!reason) return <span class="muted">{compact ? '—' : 'None'}</span>;
  const words = explainFailure(reason);
  if (compact) {
    return (
      <span class="failure-compact">
        <code>{reason}</code>
        {words ? <span class="delivery-reason">{words}</span> : null}
      </span>
    );
  }
  return (
    <span>
      <code>{reason}</code>
      {words ? <span class="delivery-reason"> {words}</span> : null}
    </span>
  );
}

/** A delivery's next attempt time, or why there is none. */
export function NextAttempt({ status, at, short }: { status: DeliveryStatus; at: string | null; short?: boolean }) {
  if (at) return short ? <ShortTime iso={at} /> : <Time iso={at} />;
  if (status === 'pending') return <span class="muted">Queued</span>;
  // The 7th retryable failure leaves the row failed with no next attempt until the dead-letter consumer marks it.
  if (status === 'failed') return <span class="muted">None: retries exhausted</span>;
  return <span class="muted">—</span>;
}

const thisYear = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' });
const otherYear = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const thisYearSeconds = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
  second: '2-digit',
});
const otherYearSeconds = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/**
 * A timestamp for a table cell: the year only when it is not this year (the full instant is in
 * `title`); `seconds` for events that come seconds apart (attempts).
 */
export function ShortTime({ iso, seconds }: { iso: string | null | undefined; seconds?: boolean }) {
  if (!iso) return <span class="muted">—</span>;
  const date = new Date(iso);
  const sameYear = date.getFullYear() === new Date().getFullYear();
  const format = seconds ? (sameYear ? thisYearSeconds : otherYearSeconds) : sameYear ? thisYear : otherYear;
  return (
    <time dateTime={iso} title={iso}>
      {format.format(date)}
    </time>
  );
}
