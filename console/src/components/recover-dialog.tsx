/**
 * Recover deliveries (docs/behaviour.md#recovery-jobs): choose a time window and statuses,
 * count the matches with a dry run (saying how many were left out because they already have a
 * replay, with a choice to include them), then start the job and follow it (refreshed by itself
 * on the shared backoff schedule) with "Cancel recovery" while it runs. Starting sends one
 * `Idempotency-Key` per choice, so a double click or a retry starts one recovery.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { newIdempotencyKey, type ApiProblem } from '../api/client';
import type { Endpoint, Job, JobStatus } from '../api/contract';
import type { DEFAULT_RECOVERY_STATUSES, RECOVERABLE_STATUSES } from '../../../lambdas/contract/jobs';
import { plural } from '../plural';
import { useSession } from '../session';
import { useLiveRefresh } from './live-refresh';
import { asProblem } from './load';
import { ConfirmDialog } from './confirm-dialog';
import { Dialog, ProblemView, Time } from './ui';

type Recoverable = (typeof RECOVERABLE_STATUSES)[number];

/** The statuses a recovery may select, with what each means for a replay. */
const STATUSES = [
  { status: 'failed_permanent', label: 'Failed permanently', help: 'Refused by the receiver, or held while the endpoint was disabled.' },
  { status: 'dead_lettered', label: 'Dead-lettered', help: 'Every retry failed.' },
  { status: 'failed', label: 'Failed, retrying', help: 'Still on their own retry schedule: a replay may arrive as well as a later retry.' },
] as const satisfies readonly { status: Recoverable; label: string; help: string }[];

/** The API's default when a request names no statuses (DEFAULT_RECOVERY_STATUSES in the contract). */
const DEFAULT_STATUSES = ['failed_permanent', 'dead_lettered'] as const satisfies typeof DEFAULT_RECOVERY_STATUSES;

const JOB_TEXT: Record<JobStatus, string> = {
  running: 'Running',
  completed: 'Completed',
  cancelled: 'Cancelled',
  failed: 'Failed',
};

/** A `datetime-local` value (local time, minutes) for an instant. */
function toLocalInput(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** A `datetime-local` value as an ISO 8601 instant, or null when empty or invalid. */
function toIso(value: string): string | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

function deliveries(n: number): string {
  return plural(n, 'delivery', 'deliveries');
}

/** Why some matches are left out: each already has a replay (`skippedReplayed`), so recovering them again would send them twice. */
function skippedText(n: number, atLeast: boolean): string {
  const they = n === 1 ? 'it already has a replay' : 'they already have a replay';
  return `(${atLeast ? 'at least ' : ''}${deliveries(n)} left out because ${they}: choose “Include deliveries already replayed” to send ${n === 1 ? 'it' : 'them'} again)`;
}

/** The recover request for the dialog's fields, or the errors that stop it. */
function requestOf(from: string, to: string, statuses: readonly Recoverable[], includeReplayed: boolean) {
  const since = toIso(from);
  const until = to ? toIso(to) : undefined;
  const errors: { from?: string; to?: string; statuses?: string } = {};
  if (!since) errors.from = 'Enter the start of the window.';
  if (until === null) errors.to = 'Enter a valid date and time, or leave it empty for now.';
  if (since && until && since > until) errors.to = 'To must be after From.';
  if (statuses.length === 0) errors.statuses = 'Choose at least one status.';
  const request =
    Object.keys(errors).length > 0 || !since
      ? null
      : { since, ...(until ? { until } : {}), statuses: [...statuses], ...(includeReplayed ? { includeReplayed: true } : {}) };
  return { request, errors };
}

/** One end of the time window: a local date-time input, with its error (id `${id}-error`) under it. */
function WindowField(props: {
  id: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  error: string | undefined;
  describedBy: string;
}) {
  const { id, error } = props;
  return (
    <div class="field">
      <label class="field-label" for={id}>
        {props.label}
      </label>
      <input
        id={id}
        type="datetime-local"
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={props.describedBy}
      />
      {error ? (
        <p id={`${id}-error`} class="field-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** The recovery dialog of one endpoint. `onClose(started)` says whether a job was started. */
export function RecoverDialog({ endpoint, onClose }: { endpoint: Endpoint; onClose: (started: boolean) => void }) {
  const { client } = useSession();
  const [from, setFrom] = useState(() => toLocalInput(new Date(Date.now() - 24 * 3600_000)));
  const [to, setTo] = useState('');
  const [statuses, setStatuses] = useState<readonly Recoverable[]>(DEFAULT_STATUSES);
  const [includeReplayed, setIncludeReplayed] = useState(false);
  const [fieldError, setFieldError] = useState<{ from?: string; to?: string; statuses?: string }>({});
  const [count, setCount] = useState<{ matched: number; atLeast: boolean; skippedReplayed: number; body: string } | null>(null);
  const [busy, setBusy] = useState<'count' | 'start' | 'cancel' | null>(null);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [job, setJob] = useState<Job | null>(null);
  const [pollProblem, setPollProblem] = useState<ApiProblem | null>(null);
  const attempt = useRef<{ key: string; body: string } | null>(null);
  const progressRef = useRef<HTMLDivElement>(null);

  /** The request body for the current fields, or null (with field errors shown) when invalid. */
  const body = () => {
    const { request, errors } = requestOf(from, to, statuses, includeReplayed);
    setFieldError(errors);
    return request;
  };

  const countMatches = async () => {
    if (busy) return;
    const request = body();
    if (!request) return;
    setBusy('count');
    setProblem(null);
    try {
      const answer = await client.dryRun('recoverWebhookDeliveries', {
        params: { endpointId: endpoint.endpointId },
        body: { ...request, dryRun: true },
      });
      setCount({
        matched: answer.matched,
        atLeast: answer.matchedAtLeast,
        skippedReplayed: answer.skippedReplayed,
        body: JSON.stringify(request),
      });
    } catch (e) {
      setProblem(asProblem(e));
    } finally {
      setBusy(null);
    }
  };

  const start = async () => {
    if (busy) return;
    const request = body();
    if (!request) return;
    const text = JSON.stringify(request);
    if (attempt.current?.body !== text) attempt.current = { key: newIdempotencyKey(), body: text };
    setBusy('start');
    setProblem(null);
    try {
      const started = (await client.call('recoverWebhookDeliveries', {
        params: { endpointId: endpoint.endpointId },
        body: request,
        idempotencyKey: attempt.current.key,
      })) as Job;
      setJob(started);
    } catch (e) {
      setProblem(asProblem(e));
    } finally {
      setBusy(null);
    }
  };

  /**
   * Follows a recovery that was already running: its id is in the RecoveryInProgress detail, else
   * it is the endpoint's running job in the list of jobs.
   */
  const follow = async (jobId: string | undefined) => {
    setProblem(null);
    try {
      if (jobId) setJob(await client.call('getJob', { params: { jobId } }));
      else {
        const running = (await client.call('listJobs', { query: { status: 'running', limit: 50 } })).items.find(
          (j) => j.endpointId === endpoint.endpointId,
        );
        if (running) setJob(running);
        else setProblem(asProblem(new Error('The running recovery was not found: it may have just finished. Count again.')));
      }
    } catch (e) {
      setProblem(asProblem(e));
    }
  };

  /** One refresh of the running job; a failure is shown and the schedule goes on. */
  const refreshJob = async () => {
    if (!job) return;
    try {
      const next = await client.call('getJob', { params: { jobId: job.jobId } });
      setPollProblem(null);
      setJob(next);
    } catch (e) {
      setPollProblem(asProblem(e));
      throw e;
    }
  };
  useLiveRefresh(job?.status === 'running', refreshJob, job && `${job.jobId}|${job.replayed}|${job.skipped}`);

  const cancel = async () => {
    if (!job || busy) return;
    setBusy('cancel');
    setPollProblem(null);
    try {
      setJob(await client.call('cancelJob', { params: { jobId: job.jobId } }));
    } catch (e) {
      setPollProblem(asProblem(e));
    } finally {
      setBusy(null);
    }
  };

  // The button that was focused (Start, then Cancel) goes away: keep focus in the progress.
  const jobShown = job !== null;
  const finished = job !== null && job.status !== 'running';
  useEffect(() => {
    if (!jobShown) return;
    const active = document.activeElement;
    if (
      !active ||
      active === document.body ||
      !progressRef.current?.closest('dialog')?.contains(active) ||
      (active as HTMLElement).offsetParent === null
    )
      progressRef.current?.focus();
  }, [jobShown, finished]);

  const current = requestOf(from, to, statuses, includeReplayed).request;
  const counted = count !== null && current !== null && count.body === JSON.stringify(current);
  const inProgressElsewhere = problem?.tag === 'RecoveryInProgress';
  const runningId = inProgressElsewhere ? /whj_[0-9A-Za-z]+/.exec(problem.detail)?.[0] : undefined;

  if (job) {
    const done = job.replayed + job.skipped;
    return (
      <Dialog title="Recover deliveries" onClose={() => onClose(true)}>
        <div ref={progressRef} tabIndex={-1} class="recover-progress" aria-live="polite">
          <p>
            Recovery <span class="mono">{job.jobId}</span>: <strong class={`job-status job-${job.status}`}>{JOB_TEXT[job.status]}</strong>
          </p>
          <label class="field-label" for="recover-progress-bar">
            Progress
          </label>
          <progress id="recover-progress-bar" max={Math.max(job.matched, 1)} value={job.matched === 0 ? 1 : Math.min(done, job.matched)} />
          <dl class="summary recover-counts">
            <dt>Matched</dt>
            <dd>{job.matched}</dd>
            <dt>Replayed</dt>
            <dd>{job.replayed}</dd>
            <dt>Skipped</dt>
            <dd>{job.skipped}</dd>
            <dt>Window</dt>
            <dd>
              <Time iso={job.since} /> to <Time iso={job.until} />
            </dd>
            {job.finishedAt ? (
              <>
                <dt>Finished</dt>
                <dd>
                  <Time iso={job.finishedAt} />
                </dd>
              </>
            ) : null}
          </dl>
          <p class={job.status === 'completed' ? 'success' : job.status === 'running' ? 'muted' : 'notice'}>
            {job.status === 'running'
              ? 'Each match is replayed as a new pending delivery. Closing this dialog does not stop the recovery.'
              : job.status === 'completed'
                ? `Done: ${deliveries(job.replayed)} replayed${job.skipped ? `, ${plural(job.skipped, 'skipped because it', 'skipped because they')} changed meanwhile` : ''}. The replays appear in the delivery log.`
                : job.status === 'cancelled'
                  ? `Cancelled after ${deliveries(job.replayed)} replayed. The rest were left as they were.`
                  : 'The recovery stopped: the endpoint was disabled or deleted while it ran.'}
          </p>
        </div>
        {pollProblem ? (
          <ProblemView
            problem={pollProblem}
            onRetry={() => {
              setPollProblem(null);
              void refreshJob().catch(() => undefined);
            }}
          />
        ) : null}
        <div class="dialog-actions">
          {job.status === 'running' ? (
            <button type="button" class="button button-danger" onClick={() => void cancel()} aria-disabled={busy === 'cancel'}>
              Cancel recovery
            </button>
          ) : null}
          <button type="button" class="button" onClick={() => onClose(true)}>
            Close
          </button>
        </div>
      </Dialog>
    );
  }

  return (
    <ConfirmDialog
      title="Recover deliveries"
      onClose={() => onClose(false)}
      describedBy="recover-explain"
      problem={problem}
      afterProblem={
        inProgressElsewhere ? (
          <p>
            <button type="button" class="button button-small" onClick={() => void follow(runningId)}>
              Show the running recovery
            </button>
          </p>
        ) : null
      }
      cancelLabel="Close"
      confirm={{
        label: 'Start recovery',
        tone: 'primary',
        onConfirm: () => void start(),
        disabled: !counted || count.matched === 0 || busy !== null,
        describedBy: 'recover-start-help',
      }}
      footnote={
        <p id="recover-start-help" class="field-help dialog-footnote">
          {!counted
            ? 'Count the deliveries first.'
            : count.matched === 0
              ? 'Nothing to recover with this choice.'
              : `Replays ${count.atLeast ? 'at least ' : ''}${deliveries(count.matched)} as new deliveries.`}
        </p>
      }
    >
      <p id="recover-explain">
        Replays this endpoint's deliveries created in a time window whose status you choose, each as a new delivery. Count them first, then
        start the recovery.
      </p>
      {!endpoint.enabled ? (
        <p class="notice">
          This endpoint is disabled: enable it first. A recovery of a disabled endpoint is refused, since nothing would be sent.
        </p>
      ) : null}
      <form
        class="recover-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void countMatches();
        }}
      >
        <div class="recover-window">
          <WindowField
            id="recover-from"
            label="From"
            value={from}
            onInput={setFrom}
            error={fieldError.from}
            describedBy={fieldError.from ? 'recover-from-error' : 'recover-time-help'}
          />
          <WindowField
            id="recover-to"
            label="To"
            value={to}
            onInput={setTo}
            error={fieldError.to}
            describedBy={fieldError.to ? 'recover-to-error recover-time-help' : 'recover-time-help'}
          />
        </div>
        <p id="recover-time-help" class="field-help">
          In your local time, on when each delivery was created. Leave To empty for “now”.
        </p>
        <fieldset aria-describedby={fieldError.statuses ? 'recover-statuses-error' : undefined}>
          <legend>Statuses</legend>
          {fieldError.statuses ? (
            <p id="recover-statuses-error" class="field-error">
              {fieldError.statuses}
            </p>
          ) : null}
          {STATUSES.map((s) => (
            <div class="check" key={s.status}>
              <input
                id={`recover-status-${s.status}`}
                type="checkbox"
                checked={statuses.includes(s.status)}
                onChange={(e) => {
                  const on = e.currentTarget.checked;
                  setStatuses((before) =>
                    on ? [...before.filter((x) => x !== s.status), s.status] : before.filter((x) => x !== s.status),
                  );
                }}
                aria-describedby={`recover-status-${s.status}-help`}
              />
              <span class="check-text">
                <label for={`recover-status-${s.status}`}>{s.label}</label>
                <span id={`recover-status-${s.status}-help`} class="field-help">
                  {s.help}
                </span>
              </span>
            </div>
          ))}
        </fieldset>
        <div class="check recover-include">
          <input
            id="recover-include-replayed"
            type="checkbox"
            checked={includeReplayed}
            onChange={(e) => setIncludeReplayed(e.currentTarget.checked)}
            aria-describedby="recover-include-replayed-help"
          />
          <span class="check-text">
            <label for="recover-include-replayed">Include deliveries already replayed</label>
            <span id="recover-include-replayed-help" class="field-help">
              Left out by default, so recovering the same window twice never sends a delivery twice. Include them to replay them once more.
            </span>
          </span>
        </div>
        <div class="row">
          <button type="submit" class="button" aria-disabled={busy !== null}>
            Count deliveries
          </button>
          <span role="status" class="recover-count">
            {busy === 'count' ? (
              'Counting…'
            ) : counted ? (
              <>
                <strong>
                  {count.atLeast
                    ? `At least ${deliveries(count.matched)} match`
                    : `${deliveries(count.matched)} ${count.matched === 1 ? 'matches' : 'match'}`}
                </strong>
                {count.skippedReplayed > 0 ? ` ${skippedText(count.skippedReplayed, count.atLeast)}` : ''}
              </>
            ) : count ? (
              'The choice changed: count again.'
            ) : (
              ''
            )}
          </span>
        </div>
      </form>
    </ConfirmDialog>
  );
}
