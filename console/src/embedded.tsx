/**
 * The console inside the platform's product (docs/behaviour.md#the-embedded-console): the
 * header of a portal session (the platform's name for the workspace, its accent colour, no
 * "Sign out": the platform's page owns the person's sign-in), and the pages shown instead of a
 * sign-in form when a link cannot be used or the session is over.
 */
import type { PortalSession } from './session';
import './styles/embedded.css';

/** The host a "Return to …" link names: the return address's own, as the person knows the product. */
function returnTarget(returnUrl: string | null): { href: string; host: string } | null {
  if (!returnUrl) return null;
  try {
    const url = new URL(returnUrl);
    // Only a web address: never a script or data URL, whatever the answer said.
    return url.protocol === 'https:' || url.protocol === 'http:' ? { href: url.href, host: url.host } : null;
  } catch {
    return null;
  }
}

/**
 * The shell's accent colour from the branding: set as the `--accent` custom property (through
 * the CSSOM, which the page's CSP allows; the stylesheet derives the darker and softer shades
 * from it). A value the browser does not take as a colour is ignored.
 */
export function accentStyle(portal: PortalSession | null): Record<string, string> | undefined {
  const accent = portal?.branding.accentColor;
  if (!accent || typeof CSS === 'undefined' || !CSS.supports('color', accent)) return undefined;
  return { '--accent': accent };
}

/** The embedded console's header: the workspace as the platform names it, and whether it is read-only. */
export function EmbeddedHeader({ portal, slug }: { portal: PortalSession; slug: string }) {
  const name = portal.branding.displayName?.trim() || slug;
  return (
    <header class="topbar topbar-embedded">
      <span class="brand workspace" title={name}>
        {name}
      </span>
      <span class="muted embedded-label">Webhooks</span>
      {portal.readOnly ? <span class="badge badge-readonly">Read-only</span> : null}
    </header>
  );
}

/** A portal link that was already used, has expired or was never issued: no session, and no sign-in form. */
export function LinkUnusablePage() {
  return (
    <main class="sign-in" id="main">
      <section class="card sign-in-card" aria-labelledby="link-title">
        <h1 id="link-title">This link has expired or was already used</h1>
        <p>A link to the webhooks console works once, and only for a few minutes.</p>
        <p class="muted">Go back to the page that opened it and open the webhooks settings again to get a new one.</p>
      </section>
    </main>
  );
}

/** A portal session that ended (its time is up, or it was revoked): the way back, when the platform gave one, in its colours. */
export function SessionExpiredPage({ portal }: { portal: PortalSession }) {
  const target = returnTarget(portal.returnUrl);
  return (
    <main class="sign-in shell-embedded" id="main" style={accentStyle(portal)}>
      <section class="card sign-in-card" aria-labelledby="expired-title">
        <h1 id="expired-title">Your session has expired</h1>
        <p>For your security, this view of the webhooks settings is open only for a limited time.</p>
        {target ? (
          <p>
            {/* The platform's own page, in the whole window: the frame is the platform's. */}
            <a class="button button-primary" href={target.href} target="_top">
              Return to {target.host}
            </a>
          </p>
        ) : (
          <p class="muted">Open the webhooks settings again from the page you came from.</p>
        )}
      </section>
    </main>
  );
}
