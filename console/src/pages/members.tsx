/** Workspace members, as a paged list. */
import { usePaged } from '../components/load';
import { PageHeader } from '../components/ui';
import { PAGE_SIZE, PagedTable } from '../components/workspace-paged-table';
import { useSession } from '../session';
import '../styles/workspace.css';

const ROLE_TEXT = { owner: 'Owner', admin: 'Admin', member: 'Member' } as const;

/** The members page. */
export function MembersPage() {
  const { client } = useSession();
  const paged = usePaged((cursor) => client.call('listMembers', { query: { cursor, limit: PAGE_SIZE } }), [client]);
  return (
    <section>
      <PageHeader title="Members" />
      <p class="muted ws-lead">
        The people of this workspace. An operator adds them with <span class="mono">npm run admin -- member add</span>; clients and automation use API tokens instead.
      </p>
      <PagedTable
        paged={paged}
        caption="Members"
        columns={['Email', 'Role', 'Member id']}
        loadingLabel="Loading members…"
        emptyTitle="No members yet"
        emptyNext={
          <>
            An operator adds them with <span class="mono">npm run admin -- member add &lt;slug&gt; &lt;email&gt;</span>.
          </>
        }
        row={(member) => (
          <tr key={member.memberId}>
            <td class="wrap">{member.email}</td>
            <td>{ROLE_TEXT[member.role]}</td>
            <td class="mono">{member.memberId}</td>
          </tr>
        )}
      />
    </section>
  );
}
