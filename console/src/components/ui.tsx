/** Small shared pieces of every page: states, status badges, times, copy buttons, dialogs. */
import type { ComponentChildren } from 'preact';
import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import type { ApiProblem } from '../api/client';
import type { DeliveryStatus } from '../api/contract';
import { plural } from '../plural';
import { SessionContext } from '../session';

/** The loading state: announced politely to screen readers. */
export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="state state-loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {label}
    </p>
  );
}

/** The empty state: what is missing and the next step to take. */
export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="state state-empty">
      <p class="state-title">{title}</p>
      {children ? <div class="state-next">{children}</div> : null}
    </div>
  );
}

/** A wait as a person reads it: seconds up to 90, then minutes up to 90, then hours (rounded up). */
function waitFor(seconds: number): string {
  if (seconds < 90) return plural(Math.ceil(seconds), 'second');
  const minutes = Math.ceil(seconds / 60);
  return minutes < 90 ? plural(minutes, 'minute') : plural(Math.ceil(seconds / 3600), 'hour');
}

/** An API problem as the user sees it: title, detail, what to do, and the trace id for support. */
export function ProblemView({ problem, onRetry }: { problem: ApiProblem; onRetry?: () => void }) {
  // Outside a signed-in console (sign-in, the picker) there is no session.
  const staff = useContext(SessionContext)?.staff;
  const needs = problem.requiredPermission ? ` (it needs ${problem.requiredPermission})` : '';
  return (
    <div class="problem" role="alert">
      <p class="problem-title">{problem.title}</p>
      <p class="problem-detail">{problem.detail}</p>
      {problem.status === 429 ? (
        <p class="problem-hint">
          {/* The detail above says whose quota it is: this token's, or the workspace's (shared by its tokens). */}
          {problem.retryAfterSeconds ? `Try again in ${waitFor(problem.retryAfterSeconds)}.` : 'Try again in a moment.'}
        </p>
      ) : null}
      {problem.status === 403 && staff ? (
        <p class="problem-hint">
          Your staff role ({staff.role}) may not do this{needs}. A higher role comes from your groups at the identity provider.
        </p>
      ) : problem.status === 403 ? (
        <p class="problem-hint">Your API token may not do this{needs}. Ask a workspace admin for a token with more scope.</p>
      ) : null}
      {problem.status === 0 && problem.tag === 'NetworkError' ? <p class="problem-hint">Check your connection, then try again.</p> : null}
      {problem.traceId ? (
        <p class="problem-trace">
          Trace id <code>{problem.traceId}</code> <CopyButton text={problem.traceId} label="Copy trace id" />
        </p>
      ) : null}
      {onRetry ? (
        <button type="button" class="button" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

const STATUS_TEXT: Record<DeliveryStatus, string> = {
  pending: 'Pending',
  delivered: 'Delivered',
  failed: 'Failed, retrying',
  failed_permanent: 'Failed permanently',
  dead_lettered: 'Dead-lettered',
};

/** A delivery status or attempt outcome, in words and colour (never colour alone). */
export function StatusBadge({ status }: { status: DeliveryStatus }) {
  return <span class={`badge badge-${status}`}>{STATUS_TEXT[status]}</span>;
}

/** Every delivery status, in lifecycle order. */
export const DELIVERY_STATUSES = Object.keys(STATUS_TEXT) as DeliveryStatus[];

/** The words for a delivery status. */
export function statusText(status: DeliveryStatus): string {
  return STATUS_TEXT[status];
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** A timestamp in the reader's locale, machine-readable in `datetime`; "—" when absent. */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">—</span>;
  const date = new Date(iso);
  return (
    <time dateTime={iso} title={iso}>
      {dateTime.format(date)}
    </time>
  );
}

/** A button that copies `text`; says "Copied" for a moment. Its accessible name is `label`. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (copied === 'idle') return;
    const timer = setTimeout(() => setCopied('idle'), 2000);
    return () => clearTimeout(timer);
  }, [copied]);
  const copy = () => {
    navigator.clipboard.writeText(text).then(
      () => setCopied('copied'),
      () => setCopied('failed'),
    );
  };
  return (
    <>
      <button type="button" class="button button-small" onClick={copy}>
        {label}
      </button>
      <span class="copy-status" role="status" aria-live="polite">
        {copied === 'copied' ? 'Copied' : copied === 'failed' ? 'Copy failed: select the text and copy it' : ''}
      </span>
    </>
  );
}

/**
 * A modal dialog on the native `<dialog>` (focus is kept inside it, Escape closes it). Focus
 * goes to the first control when it opens and back to what opened it when it closes.
 */
export function Dialog({
  title,
  onClose,
  children,
  describedBy,
}: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  describedBy?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useRef(`dialog-${Math.random().toString(36).slice(2)}`).current;
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      if (dialog?.open) dialog.close();
      opener?.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      class="dialog"
      aria-labelledby={titleId}
      aria-describedby={describedBy}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <h2 id={titleId} class="dialog-title">
        {title}
      </h2>
      {children}
    </dialog>
  );
}

/** A page's heading: focused on navigation, so screen readers announce the new page. */
export function PageHeader({ title, children }: { title: string; children?: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Webhooks console`;
    ref.current?.focus();
  }, [title]);
  return (
    <header class="page-header">
      <h1 ref={ref} tabIndex={-1}>
        {title}
      </h1>
      {children ? <div class="page-actions">{children}</div> : null}
    </header>
  );
}

/** "Load more" for a paged list, with its own loading text. */
export function LoadMore({
  hasMore,
  loading,
  onLoad,
  label = 'Load more',
}: {
  hasMore: boolean;
  loading: boolean;
  onLoad: () => void;
  label?: string;
}) {
  if (!hasMore) return null;
  return (
    <div class="load-more">
      <button type="button" class="button" onClick={onLoad} disabled={loading}>
        {loading ? 'Loading…' : label}
      </button>
    </div>
  );
}

/** A percentage (0.9841 → "98.4%"), "—" for null. */
export function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${(value * 100).toFixed(value === 1 || value === 0 ? 0 : 1)}%`;
}
