/** New endpoint (#/endpoints/new): the settings form; after create, the new endpoint's page. */
import { EndpointForm } from '../components/endpoint-form';
import { Empty, PageHeader } from '../components/ui';
import { href, navigate } from '../router';
import { useCan, useSession } from '../session';
import '../styles/endpoints.css';

// The endpoint this tab just created: its page says so once (not kept in the URL, so a reload
// or a shared link does not repeat it).
let justCreated: string | null = null;

/** True once for the endpoint this tab just created. */
export function takeJustCreated(endpointId: string): boolean {
  if (justCreated !== endpointId) return false;
  justCreated = null;
  return true;
}

/** Creates an endpoint. */
export function NewEndpointPage() {
  const canWrite = useCan('webhook:write');
  const embedded = useSession().portal !== null;
  return (
    <section>
      <nav class="breadcrumb" aria-label="Breadcrumb">
        <a href={href('endpoints')}>Endpoints</a>
      </nav>
      <PageHeader title="New endpoint" />
      {canWrite ? (
        <div class="card new-endpoint-card">
          <EndpointForm
            onSaved={(created) => {
              justCreated = created.endpointId;
              navigate(href(`endpoints/${created.endpointId}`));
            }}
          />
        </div>
      ) : (
        <Empty title={embedded ? 'Endpoints cannot be created here' : 'This token may not create endpoints'}>
          <p>
            {embedded ? 'This view is read-only.' : 'Creating an endpoint needs the webhook:write permission (write scope).'}{' '}
            <a href={href('endpoints')}>Back to the endpoints</a>
          </p>
        </Empty>
      )}
    </section>
  );
}
