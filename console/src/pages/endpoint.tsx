/** Not built yet: replaced by its page. */
import { PageHeader } from '../components/ui';

/** Placeholder. */
export function EndpointPage({ endpointId }: { endpointId: string; query: URLSearchParams }) {
  return <PageHeader title={endpointId} />;
}
