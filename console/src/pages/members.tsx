/** Workspace members, as a paged list. */
import type { Member } from '../api/contract';
import { usePaged } from '../components/load';
import { PageHeader } from '../components/ui';
import { PAGE_SIZE, PagedTable, type Column } from '../components/workspace-paged-table';
import { useSession } from '../session';
import '../styles/workspace.css';

const ROLE_TEXT = { owner: 'Owner', admin: 'Admin', member: 'Member' } as const;

const COLUMNS: readonly Column<Member>[] = [
  { label: 'Email', class: 'wrap', cell: (member) => member.email },
  { label: 'Role', cell: (member) => ROLE_TEXT[member.role] },
  { label: 'Member id', class: 'mono', cell: (member) => member.memberId },
];

/** The members page. */
export function MembersPage() {
  const { client } = useSession();
  const paged = usePaged((cursor) => client.call('listMembers', { query: { cursor, limit: PAGE_SIZE } }), [client]);
  return (
    <section>
      <PageHeader title="Members" />
      <p class="muted ws-lead">
        The people of this workspace. An operator adds them with <span class="mono">npm run admin -- member add</span>; clients and
        automation use API tokens instead.
      </p>
      <PagedTable
        paged={paged}
        caption="Members"
        columns={COLUMNS}
        rowKey={(member) => member.memberId}
        loadingLabel="Loading members…"
        emptyTitle="No members yet"
        emptyNext={
          <>
            An operator adds them with <span class="mono">npm run admin -- member add &lt;slug&gt; &lt;email&gt;</span>.
          </>
        }
      />
    </section>
  );
}
