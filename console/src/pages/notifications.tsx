/**
 * Workspace notifications (dead letters, disabled endpoints), newest first, as a paged list: all
 * of them, or only those not acknowledged yet, or only the acknowledged ones; each can be
 * acknowledged where it is listed.
 */
import { useMemo, useState } from 'preact/hooks';
import type { Notification } from '../api/contract';
import { endpointLabels, useEndpointDirectory } from '../components/delivery-parts';
import { usePaged } from '../components/load';
import { PageHeader, Time } from '../components/ui';
import { PAGE_SIZE, PagedTable, type Column } from '../components/workspace-paged-table';
import { AckButton, NotificationKind, NotificationLinks } from '../components/workspace-notification';
import { href, replaceRoute } from '../router';
import { useSession } from '../session';
import '../styles/workspace.css';

/** Which notifications the page lists: all, only acknowledged, or only not acknowledged. */
type AcknowledgedFilter = 'all' | 'acknowledged' | 'unacknowledged';

/** The API's `acknowledged` query value for a filter (absent for all). */
function acknowledgedQuery(filter: AcknowledgedFilter): 'true' | 'false' | undefined {
  return filter === 'all' ? undefined : filter === 'acknowledged' ? 'true' : 'false';
}

const FILTERS: readonly { value: AcknowledgedFilter; label: string }[] = [
  { value: 'all', label: 'All notifications' },
  { value: 'unacknowledged', label: 'Not acknowledged' },
  { value: 'acknowledged', label: 'Acknowledged' },
];

function readFilter(query: URLSearchParams): AcknowledgedFilter {
  const value = query.get('acknowledged');
  return value === 'true' ? 'acknowledged' : value === 'false' ? 'unacknowledged' : 'all';
}

/** The notifications page; the filter lives in the address (`?acknowledged=true|false`). */
export function NotificationsPage({ query }: { query: URLSearchParams }) {
  const { client } = useSession();
  const filter = readFilter(query);
  const paged = usePaged(
    (cursor) => client.call('listNotifications', { query: { acknowledged: acknowledgedQuery(filter), cursor, limit: PAGE_SIZE } }),
    [client, filter],
  );
  // Acknowledged on this page: shown as such at once, without reading the list again.
  const [acked, setAcked] = useState<ReadonlyMap<string, Notification>>(new Map());
  const directory = useEndpointDirectory(paged.items.some((n) => n.endpointId));
  const labels = useMemo(() => endpointLabels(directory.data ?? []), [directory.data]);

  const columns: readonly Column<Notification>[] = [
    { label: 'Time', cell: (n) => <Time iso={n.createdAt} /> },
    { label: 'Kind', cell: (n) => <NotificationKind kind={n.kind} /> },
    { label: 'Message', class: 'wrap ws-message', cell: (n) => n.message },
    {
      label: 'Where to act',
      cell: (n) => <NotificationLinks notification={n} endpointLabel={n.endpointId ? labels.get(n.endpointId) : undefined} />,
    },
    {
      label: 'Acknowledged',
      cell: (n) => (
        <AckButton
          notification={acked.get(n.notificationId) ?? n}
          onAcknowledged={(answer) => setAcked((before) => new Map(before).set(n.notificationId, answer))}
        />
      ),
    },
  ];

  return (
    <section>
      <PageHeader title="Notifications" />
      <p class="muted ws-lead">
        What the service tells the workspace about: deliveries that stopped retrying (dead-lettered) and endpoints it disabled after
        repeated failures. Newest first. Acknowledge one once it is dealt with: it leaves the overview’s “Needs action”.
      </p>
      <div class="field ws-filter">
        <label class="field-label" for="notifications-show">
          Show
        </label>
        <select
          id="notifications-show"
          value={filter}
          onChange={(e) => {
            const value = e.currentTarget.value as AcknowledgedFilter;
            replaceRoute(href('notifications', { acknowledged: acknowledgedQuery(value) }));
          }}
        >
          {FILTERS.map((f) => (
            <option key={f.value} value={f.value}>
              {f.label}
            </option>
          ))}
        </select>
      </div>
      <PagedTable
        paged={paged}
        caption="Notifications"
        columns={columns}
        rowKey={(n) => n.notificationId}
        loadingLabel="Loading notifications…"
        emptyTitle={
          filter === 'acknowledged'
            ? 'No acknowledged notifications'
            : filter === 'unacknowledged'
              ? 'Nothing left to acknowledge'
              : 'No notifications'
        }
        emptyNext={
          filter === 'all'
            ? 'Nothing has gone wrong: when a delivery is dead-lettered or an endpoint is disabled, it shows up here.'
            : 'Choose “All notifications” to see the others.'
        }
      />
    </section>
  );
}
