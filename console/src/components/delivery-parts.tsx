/** Pieces the delivery log and the delivery page share: the endpoint directory, links and failure reasons in words. */
import type { DeliveryStatus, Endpoint } from '../api/contract';
import { href } from '../router';
import { useSession } from '../session';
import { useLoad } from './load';
import { Time } from './ui';
import { explainFailure } from '../failure-reasons';

/** At most this many endpoint pages are read for the directory (200 each). */
const MAX_ENDPOINT_PAGES = 25;

/** Every endpoint of the workspace (paged through), to name endpoints by URL and offer them as a filter. */
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

/** A link to an endpoint, by its URL when known (else its id). */
export function EndpointLink({ endpointId, url }: { endpointId: string; url?: string | null }) {
  return (
    <a href={href(`endpoints/${endpointId}`)} class={url ? 'delivery-url' : 'mono'}>
      {url ? breakable(url) : endpointId}
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

/** A failure code with its explanation. */
export function FailureReason({ reason }: { reason: string | null }) {
  if (!reason) return <span class="muted">None</span>;
  const words = explainFailure(reason);
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

/** A timestamp for a table cell: the year only when it is not this year (the full instant is in `title`). */
export function ShortTime({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">—</span>;
  const date = new Date(iso);
  const format = date.getFullYear() === new Date().getFullYear() ? thisYear : otherYear;
  return (
    <time dateTime={iso} title={iso}>
      {format.format(date)}
    </time>
  );
}
