/**
 * The delivery log (docs/behaviour.md#workspace-delivery-log): workspace-wide at `#/deliveries`, or fixed to one endpoint
 * on its page. Both read `GET /workspaces/{slug}/deliveries` (listDeliveries), the endpoint's with
 * `endpointId`, so the filters work the same in both places. Filters live in the page URL.
 */
import { useMemo, useRef, useState } from 'preact/hooks';
import type { ApiClient } from '../api/client';
import type { QueryOf, ResponseOf } from '../api/contract';
import { DeliveryFilters, FILTER_KEYS, hasFilters, readFilters, type LogFilters } from '../components/delivery-filters';
import {
  DeliveryLink,
  EndpointLink,
  endpointLabels,
  FailureReason,
  NextAttempt,
  ShortTime,
  useEndpointDirectory,
} from '../components/delivery-parts';
import { inProgress, useLiveRefresh } from '../components/live-refresh';
import { useLoad, usePaged } from '../components/load';
import { Empty, Loading, LoadMore, PageHeader, ProblemView, StatusBadge } from '../components/ui';
import { parseHash } from '../hash-route';
import { href, navigate, replaceRoute } from '../router';
import { useCan, useOfferedEventTypes, useSession } from '../session';
import '../styles/deliveries.css';

/** Deliveries per page. */
const PAGE_SIZE = 50;
/**
 * A page of a selective filter may come back short, even empty, with a cursor (the API bounds
 * each page's reads): an empty page is followed this many more times before it is shown.
 */
const EMPTY_PAGE_FOLLOWS = 4;

type LogQuery = NonNullable<QueryOf<'listDeliveries'>>;
type LogPage = ResponseOf<'listDeliveries'>;

/** The API query of a view (fixed endpoint first, then the URL's filters). */
function apiQuery(filters: LogFilters, endpointId: string | undefined): LogQuery {
  return {
    status: filters.statuses.length ? filters.statuses.join(',') : undefined,
    eventType: filters.eventType || undefined,
    endpointId: endpointId ?? (filters.endpointId || undefined),
    since: filters.since || undefined,
    until: filters.until || undefined,
  };
}

/** One page of the log, following empty pages a few times so a selective filter still shows rows. */
async function loadLogPage(client: ApiClient, query: LogQuery, cursor: string | undefined): Promise<LogPage> {
  let page = await client.call('listDeliveries', { query: { ...query, limit: PAGE_SIZE, cursor } });
  for (let follow = 0; page.items.length === 0 && page.nextCursor && follow < EMPTY_PAGE_FOLLOWS; follow++) {
    page = await client.call('listDeliveries', { query: { ...query, limit: PAGE_SIZE, cursor: page.nextCursor } });
  }
  return page;
}

/** Writes filters into the current page's URL (keeping its path and other query keys), without a history entry. */
function writeFilters(filters: LogFilters, fixedEndpoint: boolean): void {
  const route = parseHash(location.hash);
  const keep: Record<string, string> = {};
  route.query.forEach((value, key) => {
    if (!(FILTER_KEYS as readonly string[]).includes(key)) keep[key] = value;
  });
  replaceRoute(
    href(route.segments.map(encodeURIComponent).join('/'), {
      ...keep,
      status: filters.statuses,
      eventType: filters.eventType,
      endpointId: fixedEndpoint ? undefined : filters.endpointId,
      since: filters.since,
      until: filters.until,
    }),
  );
}

/**
 * The delivery log with its filters, workspace-wide or fixed to one endpoint (the endpoint page
 * embeds it with `endpointId`: the "Endpoint" filter and column are then hidden). Filters live
 * in `query` (the page URL): `status` (comma-separated), `eventType`, `endpointId`, `since`, `until`.
 */
export function DeliveryLog({ endpointId, query }: { endpointId?: string; query: URLSearchParams }) {
  const { client } = useSession();
  const canTest = useCan('webhook:test');
  const fixed = endpointId !== undefined;
  const filters = readFilters(query);
  const request = apiQuery(filters, endpointId);
  const requestKey = JSON.stringify(request);
  // The view whose rows are on screen: a refresh of the same view keeps them until the new page comes.
  const shownKey = useRef<string | null>(null);
  const paged = usePaged(
    (cursor) =>
      loadLogPage(client, request, cursor).then((page) => {
        if (cursor === undefined) shownKey.current = requestKey;
        return page;
      }),
    [client, requestKey],
  );
  const refreshing = paged.state === 'loading' && shownKey.current === requestKey && paged.items.length > 0;
  const log = refreshing ? { ...paged, state: 'ready' as const } : paged;
  const directory = useEndpointDirectory(!fixed);
  const eventTypes = useLoad(() => client.call('listEventTypes'), [client]);
  const offer = useOfferedEventTypes();
  const endpoints = useMemo(() => new Map((directory.data ?? []).map((e) => [e.endpointId, e])), [directory.data]);
  const labels = useMemo(() => endpointLabels(directory.data ?? []), [directory.data]);
  // Rows still pending or retrying change by themselves: the log follows them without a click.
  const moving = log.state === 'ready' && log.items.filter((d) => inProgress(d.status));
  useLiveRefresh(
    moving !== false && moving.length > 0,
    () => paged.refresh((d) => d.deliveryId),
    moving && moving.map((d) => `${d.deliveryId}:${d.status}:${d.attempts}`).join(','),
  );
  const filtered = hasFilters({ ...filters, endpointId: fixed ? '' : filters.endpointId });

  const change = (next: LogFilters) => writeFilters(next, fixed);
  // The empty and the refused state offer "Clear filters" themselves: one button of that name at a time.
  const stateClears =
    filtered &&
    ((log.state === 'error' && log.problem?.status === 400) || (log.state === 'ready' && log.items.length === 0 && !log.hasMore));
  const clear = () => change({ statuses: [], eventType: '', endpointId: '', since: '', until: '' });

  return (
    <div class="delivery-log">
      <DeliveryFilters
        filters={filters}
        onChange={change}
        endpoints={fixed ? undefined : (directory.data ?? [])}
        endpointsFailed={directory.state === 'error'}
        showClear={!stateClears}
        eventTypes={offer(eventTypes.data?.items ?? []).map((t) => t.name)}
        actions={
          <>
            <button type="button" class="button button-small" onClick={() => log.reload()}>
              Refresh deliveries
            </button>
            <span class="muted delivery-refreshing" role="status">
              {refreshing ? 'Refreshing…' : ''}
            </span>
          </>
        }
      />
      {log.state === 'loading' ? <Loading label="Loading deliveries…" /> : null}
      {log.state === 'error' && log.problem ? (
        <div>
          <ProblemView problem={log.problem} onRetry={() => log.reload()} />
          {filtered && log.problem.status === 400 ? (
            <button type="button" class="button" onClick={clear}>
              Clear filters
            </button>
          ) : null}
        </div>
      ) : null}
      {log.state === 'ready' && log.items.length === 0 ? (
        log.hasMore ? (
          <Empty title="No matching deliveries among the newest ones searched">
            <p>The log is searched a part at a time. Load more to search older deliveries.</p>
          </Empty>
        ) : filtered ? (
          <Empty title="No deliveries match these filters">
            <p>Widen the time range or choose other statuses, or clear the filters to see every delivery.</p>
            <button type="button" class="button" onClick={clear}>
              Clear filters
            </button>
          </Empty>
        ) : (
          <Empty title="No deliveries yet">
            {fixed ? (
              <p>
                Deliveries appear here when an event this endpoint subscribes to is published.
                {canTest ? ' Use “Send test event” to try it now.' : ''}
              </p>
            ) : (
              <p>
                Deliveries appear here when an event is published to a subscribed endpoint.
                {canTest ? (
                  <>
                    {' '}
                    Open one of your <a href={href('endpoints')}>endpoints</a> and send a test event to try it.
                  </>
                ) : null}
              </p>
            )}
          </Empty>
        )
      ) : null}
      {log.state === 'ready' && log.items.length > 0 ? (
        <div class="table-wrap">
          <table class="delivery-table">
            <caption class="visually-hidden">Deliveries{filtered ? ' matching the filters' : ''}, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Delivery</th>
                <th scope="col">Status</th>
                <th scope="col">Event type</th>
                {fixed ? null : <th scope="col">Endpoint</th>}
                <th scope="col" class="num">
                  Attempts
                </th>
                <th scope="col">Next attempt</th>
                <th scope="col">Created</th>
                <th scope="col">Last error</th>
              </tr>
            </thead>
            <tbody>
              {log.items.map((delivery) => (
                <tr key={delivery.deliveryId}>
                  <th scope="row" class="delivery-id">
                    <DeliveryLink deliveryId={delivery.deliveryId} />
                  </th>
                  <td>
                    <StatusBadge status={delivery.status} />
                  </td>
                  <td class="mono">{delivery.eventType}</td>
                  {fixed ? null : (
                    <td class="wrap">
                      <EndpointLink
                        endpointId={delivery.endpointId}
                        endpoint={endpoints.get(delivery.endpointId)}
                        label={labels.get(delivery.endpointId)}
                      />
                    </td>
                  )}
                  <td class="num">{delivery.attempts}</td>
                  <td>
                    <NextAttempt status={delivery.status} at={delivery.nextAttemptAt} short />
                  </td>
                  <td>
                    <ShortTime iso={delivery.createdAt} />
                  </td>
                  <td class="delivery-last-error">
                    <FailureReason reason={delivery.lastError} compact />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {log.state === 'ready' && log.problem ? <ProblemView problem={log.problem} onRetry={() => log.loadMore()} /> : null}
      {log.state === 'ready' ? <LoadMore hasMore={log.hasMore} loading={log.loadingMore} onLoad={() => log.loadMore()} /> : null}
    </div>
  );
}

/** `#/deliveries`: the workspace's delivery log. */
export function DeliveriesPage({ query }: { query: URLSearchParams }) {
  return (
    <>
      <PageHeader title="Deliveries" />
      <p class="page-intro muted">
        Every delivery of the workspace, newest first. Filters are kept in the address, so you can share this view.
      </p>
      <GoToDelivery />
      <DeliveryLog query={query} />
    </>
  );
}

/** The exact shape of a delivery id (idPattern('whd') of lambdas/contract/ids.ts; the console imports no server code). */
const DELIVERY_ID = /^whd_[0-9A-HJKMNP-TV-Z]{26}$/;

/** "Go to delivery": opens a delivery by its id (as support is given one), saying so when the id is malformed. */
function GoToDelivery() {
  const [value, setValue] = useState('');
  const [error, setError] = useState('');
  const go = () => {
    const typed = value.trim();
    // Ids are Crockford base32, read the same in either case: the API's form is upper case after the prefix.
    const id = `${typed.slice(0, 4).toLowerCase()}${typed.slice(4).toUpperCase()}`;
    if (!DELIVERY_ID.test(id)) {
      setError(
        typed
          ? 'That is not a delivery id: it starts with whd_ and 26 letters and digits follow, such as whd_01JD2Y9P0R6S8T1V3W5X7Y9ZAB.'
          : 'Enter a delivery id, such as whd_01JD2Y9P0R6S8T1V3W5X7Y9ZAB.',
      );
      return;
    }
    setError('');
    navigate(href(`deliveries/${id}`));
  };
  return (
    <form
      class="delivery-goto"
      role="search"
      aria-label="Go to a delivery"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        go();
      }}
    >
      <label class="field-label" for="delivery-goto-id">
        Delivery id
      </label>
      <div class="row delivery-goto-row">
        <input
          id="delivery-goto-id"
          type="text"
          class="mono"
          value={value}
          autoComplete="off"
          spellcheck={false}
          placeholder="whd_…"
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? 'delivery-goto-error' : undefined}
          onInput={(e) => {
            setValue(e.currentTarget.value);
            if (error) setError('');
          }}
        />
        <button type="submit" class="button">
          Go to delivery
        </button>
      </div>
      {error ? (
        <p id="delivery-goto-error" class="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}
