/**
 * The endpoint page's actions: rotate secret, send test event, disable / enable, delete and
 * recover deliveries. Each button shows only when the token has the permission it needs, and
 * every failure is shown as the API's problem.
 */
import { useRef, useState } from 'preact/hooks';
import { newIdempotencyKey, type ApiProblem } from '../api/client';
import type { Delivery, Endpoint } from '../api/contract';
import { href } from '../router';
import { useCan, useSession } from '../session';
import { inProgress, useLiveRefresh } from './live-refresh';
import { asProblem } from './load';
import { RecoverDialog } from './recover-dialog';
import { RotateDialog } from './rotate-dialog';
import { ConfirmDialog } from './confirm-dialog';
import { ProblemView, StatusBadge } from './ui';

/** A failure worth retrying as it is: no answer, rate limited, or a server error. */
function retryable(problem: ApiProblem): boolean {
  return problem.status === 0 || problem.status === 429 || problem.status >= 500;
}

type Open = 'rotate' | 'toggle' | 'delete' | 'recover' | null;

/** Props of {@link EndpointActions}. */
export interface EndpointActionsProps {
  readonly endpoint: Endpoint;
  /** The endpoint changed (enabled or disabled). */
  readonly onChanged: (endpoint: Endpoint) => void;
  /** The endpoint was deleted. */
  readonly onDeleted: () => void;
  /** New deliveries may exist (a test send, a recovery): the page refreshes its log. */
  readonly onDeliveries: () => void;
}

/** The action buttons and their dialogs. */
export function EndpointActions({ endpoint, onChanged, onDeleted, onDeliveries }: EndpointActionsProps) {
  const { client } = useSession();
  const can = {
    rotate: useCan('webhook:rotate-secret', endpoint),
    test: useCan('webhook:test', endpoint),
    write: useCan('webhook:write', endpoint),
    delete: useCan('webhook:delete', endpoint),
    replay: useCan('webhook:replay', endpoint),
  };
  const [open, setOpen] = useState<Open>(null);
  const [testing, setTesting] = useState(false);
  const [test, setTest] = useState<{ delivery: Delivery } | { problem: ApiProblem } | null>(null);
  // One key per click: a retry after a network failure ("Try again") reuses it.
  const testKey = useRef<string | null>(null);

  // Set at once on click: a fast second click comes before the re-render that `testing` waits for.
  const inFlight = useRef(false);

  const sendTest = async (retry = false) => {
    if (inFlight.current) return;
    inFlight.current = true;
    if (!retry || !testKey.current) testKey.current = newIdempotencyKey();
    setTesting(true);
    setTest(null);
    try {
      const delivery = await client.call('sendWebhookTestEvent', {
        params: { endpointId: endpoint.endpointId },
        idempotencyKey: testKey.current,
      });
      setTest({ delivery });
      onDeliveries();
    } catch (e) {
      setTest({ problem: asProblem(e) });
    } finally {
      inFlight.current = false;
      setTesting(false);
    }
  };

  if (!Object.values(can).some(Boolean)) return null;

  return (
    <section class="section endpoint-actions" aria-labelledby="actions-title">
      <h2 id="actions-title" class="visually-hidden">
        Actions
      </h2>
      <div class="row actions-row">
        {can.test ? (
          <button type="button" class="button" onClick={() => void sendTest()} aria-disabled={testing}>
            Send test event
          </button>
        ) : null}
        {can.rotate ? (
          <button type="button" class="button" onClick={() => setOpen('rotate')}>
            Rotate secret
          </button>
        ) : null}
        {can.replay ? (
          <button type="button" class="button" onClick={() => setOpen('recover')}>
            Recover deliveries
          </button>
        ) : null}
        {can.write ? (
          <button type="button" class="button" onClick={() => setOpen('toggle')}>
            {endpoint.enabled ? 'Disable endpoint' : 'Enable endpoint'}
          </button>
        ) : null}
        {can.delete ? (
          <button type="button" class="button button-danger-outline" onClick={() => setOpen('delete')}>
            Delete endpoint
          </button>
        ) : null}
      </div>
      <div role="status" class="action-status">
        {testing ? 'Sending a test event…' : null}
        {test && 'delivery' in test ? <TestSent key={test.delivery.deliveryId} delivery={test.delivery} /> : null}
      </div>
      {test && 'problem' in test ? (
        <ProblemView problem={test.problem} onRetry={retryable(test.problem) ? () => void sendTest(true) : undefined} />
      ) : null}
      {open === 'rotate' ? <RotateDialog endpoint={endpoint} onClose={() => setOpen(null)} /> : null}
      {open === 'toggle' ? (
        <ToggleDialog
          endpoint={endpoint}
          onClose={() => setOpen(null)}
          onDone={(changed) => {
            setOpen(null);
            onChanged(changed);
          }}
        />
      ) : null}
      {open === 'delete' ? <DeleteDialog endpoint={endpoint} onClose={() => setOpen(null)} onDeleted={onDeleted} /> : null}
      {open === 'recover' ? (
        <RecoverDialog
          endpoint={endpoint}
          onClose={(started) => {
            setOpen(null);
            if (started) onDeliveries();
          }}
        />
      ) : null}
    </section>
  );
}

/** A test send's delivery, its status followed by itself until it is delivered or has failed for good. */
function TestSent({ delivery }: { delivery: Delivery }) {
  const { client } = useSession();
  const [current, setCurrent] = useState(delivery);
  const moving = inProgress(current.status);
  useLiveRefresh(
    moving,
    async () => setCurrent(await client.call('getWebhookDelivery', { params: { deliveryId: delivery.deliveryId } })),
    `${current.status}|${current.attempts}`,
  );
  return (
    <p class="success">
      Test event queued: <StatusBadge status={current.status} />{' '}
      <a href={href(`deliveries/${delivery.deliveryId}`)}>{delivery.deliveryId}</a>.{' '}
      {moving ? 'Its status updates here by itself; open it to follow its attempts.' : 'Open it to see its attempts.'}
    </p>
  );
}

/** Disables or enables the endpoint, saying first what that does. */
function ToggleDialog({ endpoint, onClose, onDone }: { endpoint: Endpoint; onClose: () => void; onDone: (endpoint: Endpoint) => void }) {
  const { client } = useSession();
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const enabling = !endpoint.enabled;
  const confirm = async () => {
    if (busy) return;
    setBusy(true);
    setProblem(null);
    try {
      onDone(await client.call('updateWebhook', { params: { endpointId: endpoint.endpointId }, body: { enabled: enabling } }));
    } catch (e) {
      setProblem(asProblem(e));
      setBusy(false);
    }
  };
  return (
    <ConfirmDialog
      title={enabling ? 'Enable this endpoint?' : 'Disable this endpoint?'}
      onClose={onClose}
      describedBy="toggle-explain"
      problem={problem}
      confirm={{ label: enabling ? 'Enable' : 'Disable', tone: enabling ? 'primary' : 'danger', onConfirm: () => void confirm(), busy }}
    >
      <div id="toggle-explain">
        <p>
          <span class="mono break">{endpoint.url}</span>
        </p>
        {enabling ? (
          <ul>
            <li>Deliveries are sent to it again, starting with the next event.</li>
            <li>Its failure streak{endpoint.consecutiveFailures ? ` (now ${endpoint.consecutiveFailures})` : ''} is reset to 0.</li>
            <li>Deliveries held while it was disabled are not sent by themselves: use “Recover deliveries” to replay them.</li>
          </ul>
        ) : (
          <ul>
            <li>Nothing is sent to it while it is disabled.</li>
            <li>
              Events for it are still recorded, as deliveries held with status <strong>failed permanently</strong> and last error{' '}
              <code>endpoint_disabled</code>. Deliveries already waiting to be retried end the same way.
            </li>
            <li>After you enable it again, the held deliveries can be recovered with “Recover deliveries”.</li>
          </ul>
        )}
      </div>
    </ConfirmDialog>
  );
}

/** Deletes the endpoint once its URL is typed. */
function DeleteDialog({ endpoint, onClose, onDeleted }: { endpoint: Endpoint; onClose: () => void; onDeleted: () => void }) {
  const { client } = useSession();
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const matches = typed.trim() === endpoint.url;
  const confirm = async () => {
    if (!matches || busy) return;
    setBusy(true);
    setProblem(null);
    try {
      await client.call('deleteWebhook', { params: { endpointId: endpoint.endpointId } });
      onDeleted();
    } catch (e) {
      setProblem(asProblem(e));
      setBusy(false);
    }
  };
  return (
    <ConfirmDialog
      title="Delete this endpoint?"
      onClose={onClose}
      describedBy="delete-explain"
      problem={problem}
      form
      confirm={{ label: 'Delete permanently', tone: 'danger', onConfirm: () => void confirm(), busy, disabled: !matches }}
    >
      <div id="delete-explain">
        <p>
          This permanently deletes the endpoint <span class="mono break">{endpoint.url}</span>,{' '}
          <strong>all its delivery history and every attempt’s evidence</strong>. It cannot be undone, and its deliveries can no longer be
          replayed or recovered.
        </p>
        <p>To stop deliveries for a while instead, disable the endpoint.</p>
      </div>
      <div class="field">
        <label class="field-label" for="delete-confirm">
          Type the endpoint’s URL to confirm
        </label>
        <input
          id="delete-confirm"
          type="text"
          autoComplete="off"
          spellcheck={false}
          value={typed}
          onInput={(e) => setTyped(e.currentTarget.value)}
          aria-describedby="delete-confirm-help"
        />
        <p id="delete-confirm-help" class="field-help">
          <span class="mono break">{endpoint.url}</span>
        </p>
      </div>
    </ConfirmDialog>
  );
}
