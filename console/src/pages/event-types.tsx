/** The event-type catalogue: what an endpoint can subscribe to, with payload schemas and examples. */
import { useRef, useState } from 'preact/hooks';
import { useLoad } from '../components/load';
import { Empty, Loading, PageHeader, ProblemView } from '../components/ui';
import { PayloadSchema } from '../components/workspace-schema';
import { useOfferedEventTypes, useSession } from '../session';
import { plural } from '../plural';
import '../styles/workspace.css';

/** The event types page. */
export function EventTypesPage() {
  const { client } = useSession();
  const load = useLoad(() => client.call('listEventTypes'), [client]);
  const offered = useOfferedEventTypes();
  const [filter, setFilter] = useState('');
  const filterRef = useRef<HTMLInputElement>(null);

  // A portal session limited to some event types sees only those.
  const items = load.state === 'ready' ? offered(load.data.items) : [];
  let body;
  if (load.state === 'loading') body = <Loading label="Loading event types…" />;
  else if (load.state === 'error') body = <ProblemView problem={load.problem} onRetry={() => load.reload()} />;
  else if (items.length === 0) {
    body = (
      <Empty title="The catalogue is empty">
        An operator adds event types in <span class="mono">config/event-types.json</span>.
      </Empty>
    );
  } else {
    const needle = filter.trim().toLowerCase();
    const shown = items.filter((t) => !needle || t.name.toLowerCase().includes(needle) || t.description.toLowerCase().includes(needle));
    const custom = items.filter((t) => !t.builtIn).length;
    body = (
      <>
        <div class="filters">
          <div class="field">
            <label class="field-label" for="event-type-filter">
              Filter event types
            </label>
            <input
              id="event-type-filter"
              ref={filterRef}
              type="search"
              value={filter}
              onInput={(e) => setFilter(e.currentTarget.value)}
              aria-describedby="event-type-count"
            />
          </div>
          <p id="event-type-count" class="muted ws-count" role="status">
            {needle
              ? `${shown.length.toLocaleString('en-US')} of ${plural(items.length, 'event type')}`
              : `${plural(items.length, 'event type')}: ${items.length - custom} built in, ${custom} configured`}
          </p>
        </div>
        {shown.length === 0 ? (
          <Empty title={`No event type matches “${filter.trim()}”`}>
            <button
              type="button"
              class="button"
              onClick={() => {
                // The button goes away with the empty state: keep focus in the filter.
                setFilter('');
                filterRef.current?.focus();
              }}
            >
              Clear the filter
            </button>
          </Empty>
        ) : (
          <ul class="ws-event-types">
            {shown.map((type) => (
              <li key={type.name} class="card">
                <div class="ws-event-type-head">
                  <h2 class="mono">{type.name}</h2>
                  {type.builtIn ? <span class="badge badge-pending">Built-in</span> : <span class="badge badge-neutral">Configured</span>}
                </div>
                <p>{type.description}</p>
                <PayloadSchema name={type.name} schema={type.payloadSchema} />
              </li>
            ))}
          </ul>
        )}
      </>
    );
  }

  return (
    <section>
      <PageHeader title="Event types" />
      <p class="muted ws-lead">
        What an endpoint can subscribe to. Built-in types come from the service itself; configured ones are your deployment’s own, from{' '}
        <span class="mono">config/event-types.json</span>. A receiver gets{' '}
        <span class="mono">{'{"deliveryId", "eventType", "payload"}'}</span>, the payload valid against its type’s schema.
      </p>
      {body}
    </section>
  );
}
