/** Workspace notifications (dead letters, disabled endpoints), newest first, as a paged list. */
import { usePaged } from '../components/load';
import { PageHeader, Time } from '../components/ui';
import { PAGE_SIZE, PagedTable } from '../components/workspace-paged-table';
import { NotificationKind, NotificationLinks } from '../components/workspace-notification';
import { useSession } from '../session';
import '../styles/workspace.css';

/** The notifications page. */
export function NotificationsPage() {
  const { client } = useSession();
  const paged = usePaged((cursor) => client.call('listNotifications', { query: { cursor, limit: PAGE_SIZE } }), [client]);
  return (
    <section>
      <PageHeader title="Notifications" />
      <p class="muted ws-lead">What the service tells the workspace about: deliveries that stopped retrying (dead-lettered) and endpoints it disabled after repeated failures. Newest first.</p>
      <PagedTable
        paged={paged}
        caption="Notifications"
        columns={['Time', 'Kind', 'Message', 'Where to act']}
        loadingLabel="Loading notifications…"
        emptyTitle="No notifications"
        emptyNext="Nothing has gone wrong: when a delivery is dead-lettered or an endpoint is disabled, it shows up here."
        row={(n) => (
            <tr key={n.notificationId}>
              <td>
                <Time iso={n.createdAt} />
              </td>
              <td>
                <NotificationKind kind={n.kind} />
              </td>
              <td class="wrap ws-message">
                {n.message}
              </td>
              <td>
                <NotificationLinks notification={n} />
              </td>
            </tr>
        )}
      />
    </section>
  );
}
