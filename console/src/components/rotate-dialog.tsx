/**
 * Secret rotation (docs/behaviour.md#secret-rotation): a confirm step that explains the 24 h
 * grace window, then the new secret, shown once. The secret lives only in this component's
 * state: closing the dialog unmounts it, so it is gone from the page and from memory.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiProblem } from '../api/client';
import type { Endpoint, RotatedSecret } from '../api/contract';
import { useSession } from '../session';
import { asProblem } from './load';
import { CopyButton, Dialog, ProblemView, Time } from './ui';

/** The grace window of a replaced secret (SECRET_GRACE_HOURS in the contract). */
const GRACE_HOURS = 24;

/** Rotates the endpoint's signing secret and shows the new one once. */
export function RotateDialog({ endpoint, onClose }: { endpoint: Endpoint; onClose: () => void }) {
  const { client } = useSession();
  const [rotating, setRotating] = useState(false);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [rotated, setRotated] = useState<RotatedSecret | null>(null);
  const secretRef = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    // The confirm button is gone: focus (and select) the secret so it can be copied at once.
    if (!rotated) return;
    secretRef.current?.focus();
    secretRef.current?.select();
  }, [rotated]);

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
      <Dialog title="Secret rotated" onClose={onClose}>
        <p class="notice" id="secret-warning">
          <strong>Copy this secret now: it will not be shown again.</strong> Store it where your receiver reads its signing secret. Once you close this dialog it is gone from this page.
        </p>
        <div class="field">
          <label class="field-label" for="new-secret">
            New signing secret
          </label>
          {/* A textarea, so the whole secret shows (wrapped) even on a phone. */}
          <textarea id="new-secret" ref={secretRef} class="secret secret-text" rows={2} readOnly value={rotated.secret} spellcheck={false} autoComplete="off" aria-describedby="secret-warning secret-grace" />
        </div>
        <div class="row">
          <CopyButton text={rotated.secret} label="Copy secret" />
        </div>
        <p id="secret-grace" class="field-help">
          {rotated.previousSecretExpiresAt ? (
            <>
              The previous secret keeps verifying until <Time iso={rotated.previousSecretExpiresAt} />: deliveries carry a signature by each secret until then.
            </>
          ) : (
            'No previous secret is active: deliveries are signed with this secret only.'
          )}
        </p>
        <div class="dialog-actions">
          <button type="button" class="button button-primary" onClick={onClose}>
            Done
          </button>
        </div>
      </Dialog>
    );
  }

  return (
    <Dialog title="Rotate the signing secret?" onClose={onClose} describedBy="rotate-explain">
      <div id="rotate-explain">
        <p>
          A new signing secret is created for <span class="mono break">{endpoint.url}</span> and shown to you once.
        </p>
        <p>
          The current secret keeps verifying for {GRACE_HOURS} hours: until then every delivery is signed with both secrets, so your receiver keeps working while you update it. After {GRACE_HOURS} hours only the new secret signs. Rotating again within
          the window ends the older secret at once.
        </p>
      </div>
      {problem ? <ProblemView problem={problem} /> : null}
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onClose}>
          Cancel
        </button>
        <button type="button" class="button button-primary" onClick={() => void rotate()} aria-disabled={rotating}>
          Rotate
        </button>
      </div>
      <p class="visually-hidden" role="status">
        {rotating ? 'Rotating…' : ''}
      </p>
    </Dialog>
  );
}
