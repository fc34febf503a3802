/** Sign-in: workspace slug and API token; the token stays in this tab's sessionStorage. */
import { useState } from 'preact/hooks';
import type { ApiProblem } from '../api/client';
import { ProblemView } from '../components/ui';
import type { StoredSession } from '../session';

/** The sign-in page; `reason` says why the user is here again (a 401, a sign-out). */
export function SignInPage({ reason, onSignIn }: { reason?: string; onSignIn: (session: StoredSession) => Promise<ApiProblem | null> }) {
  const [slug, setSlug] = useState('');
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    const failed = await onSignIn({ slug: slug.trim(), token: token.trim() });
    setBusy(false);
    if (failed) setProblem(failed);
  };
  return (
    <main class="sign-in" id="main">
      <form class="card sign-in-card" onSubmit={(e) => void submit(e)} aria-describedby="sign-in-help">
        <h1>Sign in to the webhooks console</h1>
        <p id="sign-in-help" class="muted">
          Use your workspace slug and an API token. The token is kept in this browser tab only and is forgotten when you sign out or close
          the tab.
        </p>
        {reason ? (
          <p class="notice" role="status">
            {reason}
          </p>
        ) : null}
        <label class="field">
          <span class="field-label">Workspace</span>
          <input
            name="workspace"
            autoComplete="username"
            required
            value={slug}
            onInput={(e) => setSlug(e.currentTarget.value)}
            spellcheck={false}
          />
        </label>
        <label class="field">
          <span class="field-label">API token</span>
          <input
            name="token"
            type="password"
            autoComplete="current-password"
            required
            value={token}
            onInput={(e) => setToken(e.currentTarget.value)}
            spellcheck={false}
          />
        </label>
        {problem ? (
          <ProblemView
            problem={
              problem.status === 404
                ? Object.assign(Object.create(Object.getPrototypeOf(problem) as object) as ApiProblem, problem, {
                    title: 'Workspace not found',
                    detail: `No workspace “${slug.trim()}” for this token. Check the slug.`,
                  })
                : problem
            }
          />
        ) : null}
        <button type="submit" class="button button-primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
