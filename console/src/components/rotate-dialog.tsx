/**
 * Secret rotation (docs/behaviour.md#secret-rotation): a confirm step that explains the 24 h
 * grace window, then the new secret, shown once. The secret lives only in this component's
 * state: closing the dialog unmounts it, so it is gone from the page and from memory.
 */
import { useState } from 'preact/hooks';
import type { ApiProblem } from '../api/client';
import type { Endpoint, RotatedSecret } from '../api/contract';
import { SECRET_GRACE_HOURS } from '../../../lambdas/contract/limits';
import { useSession } from '../session';
import { asProblem } from './load';
import { ShownOnceDialog } from './shown-once';
import { ConfirmDialog } from './confirm-dialog';
import { Time } from './ui';
import { plural } from '../plural';

/** The grace window of a replaced secret. */
const GRACE_HOURS = SECRET_GRACE_HOURS;

/** Rotates the endpoint's signing secret and shows the new one once. */
export function RotateDialog({ endpoint, onClose }: { endpoint: Endpoint; onClose: () => void }) {
  const { client } = useSession();
  const [rotating, setRotating] = useState(false);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [rotated, setRotated] = useState<RotatedSecret | null>(null);

  const rotate = async () => {
    if (rotating) return;
    setRotating(true);
    setProblem(null);
    try {
      setRotated(await client.call('rotateWebhookSecret', { params: { endpointId: endpoint.endpointId } }));
    } catch (e) {
      setProblem(asProblem(e));
    } finally {
      setRotating(false);
    }
  };

  if (rotated) {
    return (
      <ShownOnceDialog
        title="Secret rotated"
        label="New signing secret"
        value={rotated.secret}
        copyLabel="Copy secret"
        advice="Store it where your receiver reads its signing secret. Once you close this dialog it is gone from this page."
        onClose={onClose}
      >
        <p class="field-help">
          {rotated.previousSecretExpiresAt ? (
            <>
              The previous secret keeps verifying until <Time iso={rotated.previousSecretExpiresAt} />: deliveries carry a signature by each
              secret until then.
            </>
          ) : (
            'No previous secret is active: deliveries are signed with this secret only.'
          )}
        </p>
      </ShownOnceDialog>
    );
  }

  return (
    <ConfirmDialog
      title="Rotate the signing secret?"
      onClose={onClose}
      describedBy="rotate-explain"
      problem={problem}
      confirm={{ label: 'Rotate', tone: 'primary', onConfirm: () => void rotate(), busy: rotating }}
      footnote={
        <p class="visually-hidden" role="status">
          {rotating ? 'Rotating…' : ''}
        </p>
      }
    >
      <div id="rotate-explain">
        <p>
          A new signing secret is created for <span class="mono break">{endpoint.url}</span> and shown to you once.
        </p>
        <p>
          The current secret keeps verifying for {plural(GRACE_HOURS, 'hour')}: until then every delivery is signed with both secrets, so
          your receiver keeps working while you update it. After {plural(GRACE_HOURS, 'hour')} only the new secret signs. Rotating again
          within the window ends the older secret at once.
        </p>
      </div>
    </ConfirmDialog>
  );
}
