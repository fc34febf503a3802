/** Not built yet: replaced by its page. */
import { PageHeader } from '../components/ui';

/** Placeholder. */
export function DeliveryPage({ deliveryId }: { deliveryId: string }) {
  return <PageHeader title={deliveryId} />;
}
