/**
 * The endpoint page's delivery options: "Custom headers", "Authentication", "Delivery rate" and
 * "Payload filter", each saved on its own. A caller without webhook:write sees them without edit
 * controls: header names only, never a value.
 */
import type { Endpoint } from '../api/contract';
import { useCan } from '../session';
import { AuthOptions, AuthSummary, RateOptions, RateSummary } from './auth-options';
import { FilterOptions, FilterSummary } from './filter-options';
import { HeaderNames, HeaderOptions } from './header-options';

/** The four sections. */
export function EndpointOptions({ endpoint, onSaved }: { endpoint: Endpoint; onSaved: (endpoint: Endpoint) => void }) {
  const canWrite = useCan('webhook:write', endpoint);
  if (!canWrite) {
    return (
      <div class="option-sections">
        <HeaderNames headers={endpoint.headers} />
        <AuthSummary auth={endpoint.auth} />
        <RateSummary rate={endpoint.rateLimitPerSecond} />
        <FilterSummary filter={endpoint.filter} />
      </div>
    );
  }
  return (
    <div class="option-sections">
      <HeaderOptions endpoint={endpoint} onSaved={onSaved} />
      <AuthOptions endpoint={endpoint} onSaved={onSaved} />
      <RateOptions endpoint={endpoint} onSaved={onSaved} />
      <FilterOptions endpoint={endpoint} onSaved={onSaved} />
    </div>
  );
}
