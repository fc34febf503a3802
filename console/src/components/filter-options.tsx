/**
 * "Payload filter" (docs/behaviour.md#payload-filters): the filter as JSON, saved with one PATCH of
 * `filter` (or removed), and "Test the filter": a sample payload checked against the filter being
 * written by the API's filter test, answering "Matches" or "Does not match: <why>". Once tested,
 * the test runs again by itself as either text changes.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiProblem } from '../api/client';
import type { Endpoint } from '../api/contract';
import { useSession } from '../session';
import { asProblem } from './load';
import { describedBy, FieldError, issuesAt, OptionSection, useOptionSave } from './option-section';
import { Empty, ProblemView } from './ui';

/** How long typing pauses before the test runs again. */
const RETEST_AFTER_MS = 500;

const EXAMPLE_FILTER = '{"data.order.warehouse": {"$in": ["ams-1", "fra-1"]}}';

/** JSON text as a value, or why it is not JSON. */
export function parseJson(text: string, what: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    return { ok: false, error: `${what} is not valid JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/** A refused filter's problems, one line each with its place in the filter; null when the problem is not about the filter. */
export function filterError(problem: ApiProblem): string | null {
  const issues = issuesAt(problem, 'body.filter');
  if (issues.length) return issues.map((i) => (i.path === 'body.filter' ? i.message : `${i.path.slice(5)}: ${i.message}`)).join('; ');
  return problem.tag === 'InvalidFilter' ? problem.detail : null;
}

const pretty = (filter: unknown) => (filter === null || filter === undefined ? '' : JSON.stringify(filter, null, 2));

/** The "Filter (JSON)" field, shared by the endpoint page and "New endpoint". */
export function FilterField({
  id,
  value,
  onInput,
  error,
  help = true,
}: {
  id: string;
  value: string;
  onInput: (v: string) => void;
  error: string | null;
  help?: boolean;
}) {
  return (
    <div class="field">
      <label class="field-label" for={id}>
        Filter (JSON)
      </label>
      <textarea
        id={id}
        class="mono json-input"
        rows={Math.min(14, Math.max(4, value.split('\n').length + 1))}
        spellcheck={false}
        placeholder={EXAMPLE_FILTER}
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={describedBy(error, `${id}-error`, help ? `${id}-help` : undefined)}
      />
      {error ? <FieldError id={`${id}-error`}>{error}</FieldError> : null}
      {help ? (
        <p id={`${id}-help`} class="field-help">
          Dotted paths into the payload, each equal to a value or tested with $in, $exists, $gt, $gte, $lt, $lte or $prefix; combine with
          $and, $or, $not. Test sends, replays and recovery are never filtered.
        </p>
      ) : null}
    </div>
  );
}

type TestResult =
  | { readonly state: 'idle' }
  | { readonly state: 'testing' }
  | { readonly state: 'done'; readonly matches: boolean; readonly reason?: string | undefined };

/** "Test the filter": a sample payload and the answer of the filter test for `filterText`. */
function FilterTest({ id, filterText, onFilterError }: { id: string; filterText: string; onFilterError: (error: string | null) => void }) {
  const { client } = useSession();
  const [sample, setSample] = useState('');
  const [sampleError, setSampleError] = useState<string | null>(null);
  const [result, setResult] = useState<TestResult>({ state: 'idle' });
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [live, setLive] = useState(false);
  // Only the newest test's answer is shown.
  const run = useRef(0);

  const test = async () => {
    const id = ++run.current;
    setProblem(null);
    if (filterText.trim() === '') {
      onFilterError('Enter a filter to test.');
      setResult({ state: 'idle' });
      return;
    }
    const filter = parseJson(filterText, 'The filter');
    const payload = parseJson(sample.trim() === '' ? '' : sample, 'The sample payload');
    onFilterError(filter.ok ? null : filter.error);
    setSampleError(
      sample.trim() === ''
        ? 'Paste a payload to test, e.g. {"data": {"order": {"warehouse": "ams-1"}}}.'
        : payload.ok
          ? null
          : payload.error,
    );
    if (!filter.ok || !payload.ok) {
      setResult({ state: 'idle' });
      return;
    }
    setResult({ state: 'testing' });
    try {
      const answer = await client.call('testWebhookFilter', { body: { filter: filter.value, payload: payload.value } });
      if (id === run.current) setResult({ state: 'done', matches: answer.matches, reason: answer.reason });
    } catch (e) {
      if (id !== run.current) return;
      const refused = asProblem(e);
      const onFilter = filterError(refused);
      const onPayload = issuesAt(refused, 'body.payload');
      if (onFilter) onFilterError(onFilter);
      else if (onPayload.length || refused.tag === 'PayloadTooLarge')
        setSampleError(onPayload.map((i) => i.message).join('; ') || refused.detail);
      else setProblem(refused);
      setResult({ state: 'idle' });
    }
  };

  useEffect(() => {
    if (!live) return;
    const timer = setTimeout(() => void test(), RETEST_AFTER_MS);
    return () => clearTimeout(timer);
  }, [filterText, sample]);

  return (
    <div class="filter-test">
      <h4 class="filter-test-title">Test the filter</h4>
      <div class="field">
        <label class="field-label" for={`${id}-sample`}>
          Sample payload
        </label>
        <textarea
          id={`${id}-sample`}
          class="mono json-input"
          rows={5}
          spellcheck={false}
          placeholder='{"data": {"order": {"warehouse": "ams-1"}}}'
          value={sample}
          onInput={(e) => setSample(e.currentTarget.value)}
          aria-invalid={sampleError ? 'true' : undefined}
          aria-describedby={describedBy(sampleError, `${id}-sample-error`, `${id}-sample-help`)}
        />
        {sampleError ? <FieldError id={`${id}-sample-error`}>{sampleError}</FieldError> : null}
        <p id={`${id}-sample-help`} class="field-help">
          An event's payload as you would publish it. Nothing is sent or saved.
        </p>
      </div>
      {problem ? <ProblemView problem={problem} /> : null}
      <div class="row">
        <button
          type="button"
          class="button"
          aria-disabled={result.state === 'testing'}
          onClick={() => {
            setLive(true);
            void test();
          }}
        >
          Test filter
        </button>
        <p class="filter-result" role="status">
          {result.state === 'testing' ? 'Testing…' : null}
          {result.state === 'done' && result.matches ? <span class="badge badge-delivered">Matches</span> : null}
          {result.state === 'done' && !result.matches ? (
            <span class="filter-no-match">
              <span class="badge badge-failed_permanent">Does not match</span>
              {result.reason ? `: ${result.reason}` : ''}
            </span>
          ) : null}
        </p>
      </div>
    </div>
  );
}

/** The Payload filter section, for a caller with webhook:write. */
export function FilterOptions({ endpoint, onSaved }: { endpoint: Endpoint; onSaved: (endpoint: Endpoint) => void }) {
  const { saving, notice, setNotice, problem, setProblem, save } = useOptionSave(endpoint, onSaved);
  const storedText = pretty(endpoint.filter);
  const [text, setText] = useState(storedText);
  const [error, setError] = useState<string | null>(null);
  const id = `filter-${endpoint.endpointId}`;
  useEffect(() => setText(storedText), [storedText]);

  const send = async (filter: unknown, saved: string) => {
    const refused = await save({ filter }, saved);
    if (!refused) return;
    const onField = filterError(refused);
    if (onField) {
      setError(onField);
      document.getElementById(id)?.focus();
    } else setProblem(refused);
  };

  const submit = async () => {
    setNotice('');
    setProblem(null);
    if (text.trim() === '') {
      setError(null);
      if (endpoint.filter === null) setNotice('Nothing to save: enter a filter first.');
      else await send(null, 'Filter removed: every event of the subscribed types is delivered.');
      return;
    }
    const parsed = parseJson(text, 'The filter');
    if (!parsed.ok) {
      setError(parsed.error);
      document.getElementById(id)?.focus();
      return;
    }
    setError(null);
    if (JSON.stringify(parsed.value) === JSON.stringify(endpoint.filter)) {
      setNotice('Nothing to save: the filter is unchanged.');
      return;
    }
    await send(parsed.value, 'Filter saved: only events whose payload matches it are delivered.');
  };

  return (
    <OptionSection
      id={`${id}-section`}
      title="Payload filter"
      lead="Published events are delivered only when their payload matches."
      saving={saving}
      notice={notice}
      problem={problem}
      onSubmit={() => void submit()}
      actions={
        <>
          <button type="submit" class="button button-primary" aria-disabled={saving}>
            Save filter
          </button>
          {endpoint.filter !== null ? (
            <button
              type="button"
              class="button button-danger-outline"
              aria-disabled={saving}
              onClick={() => {
                setNotice('');
                setProblem(null);
                setError(null);
                void send(null, 'Filter removed: every event of the subscribed types is delivered.');
              }}
            >
              Remove filter
            </button>
          ) : null}
        </>
      }
      after={<FilterTest id={id} filterText={text} onFilterError={setError} />}
    >
      {endpoint.filter === null ? (
        <Empty title="No filter">
          <p>Every event of the subscribed types is delivered. Write one below to receive only some, e.g. one warehouse’s orders.</p>
        </Empty>
      ) : null}
      <FilterField id={id} value={text} onInput={setText} error={error} />
    </OptionSection>
  );
}

/** The Payload filter section for a caller without webhook:write: the filter, and its test (a read). */
export function FilterSummary({ filter }: { filter: Endpoint['filter'] }) {
  const [error, setError] = useState<string | null>(null);
  const text = pretty(filter);
  return (
    <OptionSection id="filter-read" title="Payload filter">
      {filter === null ? (
        <Empty title="No filter">
          <p>Every event of the subscribed types is delivered.</p>
        </Empty>
      ) : (
        <>
          <pre class="filter-json">{text}</pre>
          {error ? <p class="field-error">{error}</p> : null}
          <FilterTest id="filter-read" filterText={text} onFilterError={setError} />
        </>
      )}
    </OptionSection>
  );
}
