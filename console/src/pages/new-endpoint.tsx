/** Not built yet: replaced by its page. */
import { PageHeader } from '../components/ui';

/** Placeholder. */
export function NewEndpointPage() {
  return <PageHeader title="NewEndpointPage" />;
}
