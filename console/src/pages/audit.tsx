/** The audit log: who changed what, newest first, as a paged list. */
import type { AuditEvent } from '../api/contract';
import { usePaged } from '../components/load';
import { PageHeader, Time } from '../components/ui';
import { PAGE_SIZE, PagedTable } from '../components/workspace-paged-table';
import { href } from '../router';
import { useSession } from '../session';
import '../styles/workspace.css';

/** A detail value as compact text: lists joined by commas, objects as JSON. */
function compact(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null)) return value.map(String).join(',');
  return JSON.stringify(value) ?? String(value);
}

/** The event's target, linked when the console has a page for it (a deleted endpoint has none). */
function Target({ event }: { event: AuditEvent }) {
  const id = event.targetId;
  if (id.startsWith('whd_')) {
    return (
      <a class="mono" href={href(`deliveries/${id}`)}>
        {id}
      </a>
    );
  }
  if (id.startsWith('whe_') && event.action !== 'webhook.deleted') {
    return (
      <a class="mono" href={href(`endpoints/${id}`)}>
        {id}
      </a>
    );
  }
  return <span class="mono">{id}</span>;
}

/** The audit log page. */
export function AuditPage() {
  const { client, caller } = useSession();
  const paged = usePaged((cursor) => client.call('listAuditEvents', { query: { cursor, limit: PAGE_SIZE } }), [client]);
  return (
    <section>
      <PageHeader title="Audit log" />
      <p class="muted ws-lead">Every change to endpoints, secrets, tokens and recoveries, newest first. The actor is the API token that made it, or the service itself.</p>
      <PagedTable
        paged={paged}
        caption="Audit log"
        columns={['Time', 'Action', 'Actor', 'Target', 'Detail']}
        loadingLabel="Loading the audit log…"
        emptyTitle="Nothing has been changed yet"
        emptyNext={
          <>
            Changes appear here as they happen: start by <a href={href('endpoints')}>adding an endpoint</a>.
          </>
        }
        row={(event) => {
          const detail = Object.entries(event.detail);
          return (
            <tr key={event.auditEventId}>
              <td>
                <Time iso={event.createdAt} />
              </td>
              <td class="mono">{event.action}</td>
              <td>
                {event.actor === 'system' ? (
                  'System'
                ) : (
                  <>
                    <span class="mono">{event.actor}</span>
                    {event.actor === caller.tokenId ? <span class="muted"> (your token)</span> : null}
                  </>
                )}
              </td>
              <td>
                <Target event={event} />
              </td>
              <td class="wrap">
                {detail.length === 0 ? (
                  <span class="muted">—</span>
                ) : (
                  <ul class="ws-kv">
                    {detail.map(([key, value]) => (
                      <li key={key}>
                        <code>
                          {key}={compact(value)}
                        </code>
                      </li>
                    ))}
                  </ul>
                )}
              </td>
            </tr>
          );
        }}
      />
    </section>
  );
}
