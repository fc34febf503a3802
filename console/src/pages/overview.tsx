/** Not built yet: replaced by its page. */
import { PageHeader } from '../components/ui';

/** Placeholder. */
export function OverviewPage() {
  return <PageHeader title="OverviewPage" />;
}
