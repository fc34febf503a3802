/** Not built yet: replaced by its page. */
import { PageHeader } from '../components/ui';

/** Placeholder. */
export function TokensPage() {
  return <PageHeader title="TokensPage" />;
}
