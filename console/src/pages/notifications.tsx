/** Workspace notifications (dead letters, disabled endpoints), newest first, as a paged list. */
import type { Notification } from '../api/contract';
import { usePaged } from '../components/load';
import { PageHeader, Time } from '../components/ui';
import { PAGE_SIZE, PagedTable, type Column } from '../components/workspace-paged-table';
import { NotificationKind, NotificationLinks } from '../components/workspace-notification';
import { useSession } from '../session';
import '../styles/workspace.css';

const COLUMNS: readonly Column<Notification>[] = [
  { label: 'Time', cell: (n) => <Time iso={n.createdAt} /> },
  { label: 'Kind', cell: (n) => <NotificationKind kind={n.kind} /> },
  { label: 'Message', class: 'wrap ws-message', cell: (n) => n.message },
  { label: 'Where to act', cell: (n) => <NotificationLinks notification={n} /> },
];

/** The notifications page. */
export function NotificationsPage() {
  const { client } = useSession();
  const paged = usePaged((cursor) => client.call('listNotifications', { query: { cursor, limit: PAGE_SIZE } }), [client]);
  return (
    <section>
      <PageHeader title="Notifications" />
      <p class="muted ws-lead">
        What the service tells the workspace about: deliveries that stopped retrying (dead-lettered) and endpoints it disabled after
        repeated failures. Newest first.
      </p>
      <PagedTable
        paged={paged}
        caption="Notifications"
        columns={COLUMNS}
        rowKey={(n) => n.notificationId}
        loadingLabel="Loading notifications…"
        emptyTitle="No notifications"
        emptyNext="Nothing has gone wrong: when a delivery is dead-lettered or an endpoint is disabled, it shows up here."
      />
    </section>
  );
}
