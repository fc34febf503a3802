/** The console shell: sign-in, then the navigation and the page the URL names. */
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { ApiClient, type ApiProblem } from './api/client';
import type { Overview } from './api/contract';
import { asProblem } from './components/load';
import { Loading, ProblemView } from './components/ui';
import type { Route } from './hash-route';
import { href, useRoute } from './router';
import { clearSession, loadSession, saveSession, SessionContext, type Session, type StoredSession } from './session';
import { SignInPage } from './pages/sign-in';
import { OverviewPage } from './pages/overview';
import { EndpointsPage } from './pages/endpoints';
import { NewEndpointPage } from './pages/new-endpoint';
import { EndpointPage } from './pages/endpoint';
import { DeliveriesPage } from './pages/deliveries';
import { DeliveryPage } from './pages/delivery';
import { EventTypesPage } from './pages/event-types';
import { TokensPage } from './pages/tokens';
import { AuditPage } from './pages/audit';
import { NotificationsPage } from './pages/notifications';
import { MembersPage } from './pages/members';

/** The navigation's links, in order: their labels are their accessible names, which people's automation relies on. */
const NAV = [
  { label: 'Overview', path: 'overview' },
  { label: 'Endpoints', path: 'endpoints' },
  { label: 'Deliveries', path: 'deliveries' },
  { label: 'Event types', path: 'event-types' },
  { label: 'API tokens', path: 'tokens' },
  { label: 'Audit log', path: 'audit' },
  { label: 'Notifications', path: 'notifications' },
  { label: 'Members', path: 'members' },
] as const;

type Boot =
  | { state: 'signed-out'; reason?: string }
  | { state: 'checking'; stored: StoredSession }
  | { state: 'signed-in'; stored: StoredSession; overview: Overview };

/** The whole console. */
export function App() {
  const [boot, setBoot] = useState<Boot>(() => {
    const stored = loadSession();
    return stored ? { state: 'checking', stored } : { state: 'signed-out' };
  });
  const [bootProblem, setBootProblem] = useState<ApiProblem | null>(null);

  const signOut = useCallback((reason?: string) => {
    clearSession();
    setBoot({ state: 'signed-out', reason });
  }, []);

  const onUnauthorized = useCallback((problem: ApiProblem) => signOut(`Your session ended: ${problem.detail}`), [signOut]);

  const client = useMemo(
    () => (boot.state === 'signed-out' ? null : new ApiClient(boot.stored.slug, boot.stored.token, onUnauthorized)),
    // A new client only when the credentials change.
    [boot.state === 'signed-out' ? null : boot.stored],
  );

  useEffect(() => {
    if (boot.state !== 'checking' || !client) return;
    setBootProblem(null);
    client.call('getWorkspaceOverview').then(
      (overview) => setBoot({ state: 'signed-in', stored: boot.stored, overview }),
      (e: unknown) => {
        const problem = asProblem(e);
        if (problem.status === 401 || problem.status === 404)
          signOut(
            problem.status === 404
              ? `Workspace “${boot.stored.slug}” was not found for this token.`
              : `Your session ended: ${problem.detail}`,
          );
        else setBootProblem(problem);
      },
    );
  }, [boot, client, signOut]);

  const signIn = useCallback(async (stored: StoredSession): Promise<ApiProblem | null> => {
    const probe = new ApiClient(stored.slug, stored.token);
    try {
      const overview = await probe.call('getWorkspaceOverview');
      saveSession(stored);
      setBoot({ state: 'signed-in', stored, overview });
      return null;
    } catch (e) {
      return asProblem(e);
    }
  }, []);

  if (boot.state === 'signed-out') return <SignInPage reason={boot.reason} onSignIn={signIn} />;
  if (boot.state === 'checking' || !client) {
    return (
      <main class="boot-main" id="main">
        {bootProblem ? <ProblemView problem={bootProblem} onRetry={() => setBoot({ ...boot })} /> : <Loading label="Signing in…" />}
      </main>
    );
  }
  const session: Session = {
    slug: boot.stored.slug,
    client,
    permissions: new Set(boot.overview.caller.permissions),
    caller: boot.overview.caller,
    workspaceName: boot.overview.workspace.name,
    signOut,
  };
  return (
    <SessionContext.Provider value={session}>
      <Shell session={session} />
    </SessionContext.Provider>
  );
}

function Shell({ session }: { session: Session }) {
  const route = useRoute();
  const section = route.segments[0] ?? 'overview';
  return (
    <div class="shell">
      <a
        class="skip-link"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">Webhooks</span>
        <span class="workspace" title={session.slug}>
          {session.workspaceName} <span class="muted">({session.slug})</span>
        </span>
        <button type="button" class="button button-quiet" onClick={() => session.signOut()}>
          Sign out
        </button>
      </header>
      <nav class="sidenav" aria-label="Console">
        <ul>
          {NAV.map((item) => (
            <li key={item.path}>
              <a href={href(item.path)} aria-current={section === item.path ? 'page' : undefined}>
                {item.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main class="content" id="main" tabIndex={-1}>
        <Page route={route} />
      </main>
    </div>
  );
}

function Page({ route }: { route: Route }) {
  if (route.malformed) return <PageNotFound />;
  const [section = 'overview', id] = route.segments;
  switch (section) {
    case 'overview':
      return <OverviewPage />;
    case 'endpoints':
      if (id === 'new') return <NewEndpointPage />;
      return id ? <EndpointPage key={id} endpointId={id} query={route.query} /> : <EndpointsPage />;
    case 'deliveries':
      return id ? <DeliveryPage key={id} deliveryId={id} /> : <DeliveriesPage query={route.query} />;
    case 'event-types':
      return <EventTypesPage />;
    case 'tokens':
      return <TokensPage />;
    case 'audit':
      return <AuditPage />;
    case 'notifications':
      return <NotificationsPage query={route.query} />;
    case 'members':
      return <MembersPage />;
    default:
      return <PageNotFound />;
  }
}

function PageNotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        There is no console page at this address. <a href={href('overview')}>Go to the overview</a>.
      </p>
    </section>
  );
}
