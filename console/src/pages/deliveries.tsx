/** Not built yet: replaced by its page. */
import { PageHeader } from '../components/ui';

/** Placeholder. */
export function DeliveriesPage(_: { query: URLSearchParams }) {
  return <PageHeader title="Deliveries" />;
}

/**
 * The delivery log with its filters, workspace-wide or fixed to one endpoint (the endpoint page
 * embeds it with `endpointId`). Filters live in `query` (the page URL).
 */
export function DeliveryLog(_: { endpointId?: string; query: URLSearchParams }) {
  return <p>Delivery log not built yet.</p>;
}
