/**
 * The deployment's catalogue refuses generated code that is not the configuration file's
 * (docs/behaviour.md#event-catalogue), naming the fix: each case loads the module afresh over a
 * stand-in file or stand-in generated code, as a stale build or a hand-edited file would leave them.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { deploymentCatalogue as built } from '../../lambdas/domain/configured-event-types';

const FILE = '../../config/event-types.json';
const GENERATED = '../../lambdas/generated/event-catalogue';
const MODULE = '../../lambdas/domain/configured-event-types';

const paid = { name: 'order.paid', description: 'Paid.', payloadSchema: { type: 'object' } };

/** The catalogue module loaded over the given file content and generated-code overrides. */
async function loadWith(file: unknown, generated: Record<string, unknown> = {}) {
  vi.resetModules();
  vi.doMock(FILE, () => ({ default: file }));
  vi.doMock(GENERATED, async (original) => ({ ...(await original<Record<string, unknown>>()), ...generated }));
  const { deploymentCatalogue } = await import(MODULE);
  return deploymentCatalogue as () => unknown;
}

/** The message `build` throws with (an Error), or a failure when it does not throw. */
function thrown(build: () => unknown): string {
  try {
    build();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a throw');
}

afterEach(() => {
  vi.doUnmock(FILE);
  vi.doUnmock(GENERATED);
  vi.resetModules();
});

describe('deploymentCatalogue', () => {
  it('refuses generated code older than the file, naming the command that regenerates it', async () => {
    const catalogue = await loadWith({ types: [paid] });
    expect(thrown(catalogue)).toBe('config/event-types.json differs from lambdas/generated/event-catalogue.ts: run `npm run generate`');
  });

  it('refuses a file that reuses a built-in name, naming the entry', async () => {
    const catalogue = await loadWith({ types: [{ ...paid, name: 'webhook.test_event' }] });
    expect(thrown(catalogue)).toBe('event types configuration: types[0].name webhook.test_event is built in');
  });

  it('refuses generated types that have no generated validator, naming the type', async () => {
    const catalogue = await loadWith({ types: [paid] }, { CONFIGURED_EVENT_TYPES: [paid], CONFIGURED_VALIDATORS: {} });
    expect(thrown(catalogue)).toBe('No generated validator for event type order.paid: run npm run generate');
  });

  it('builds the catalogue from the repository’s file and generated code, once', () => {
    expect(built().has('order.shipped')).toBe(true);
    expect(built()).toBe(built());
  });

  it('builds the catalogue when the generated code is the file’s', async () => {
    const validate = Object.assign(() => true, { errors: null });
    const catalogue = await loadWith(
      { types: [paid] },
      { CONFIGURED_EVENT_TYPES: [paid], CONFIGURED_VALIDATORS: { 'order.paid': validate } },
    );
    const built = catalogue() as { types: { name: string; builtIn: boolean }[]; validate: (name: string, payload: unknown) => unknown };
    expect(built.types.filter((t) => !t.builtIn).map((t) => t.name)).toEqual(['order.paid']);
    expect(built.validate('order.paid', {})).toEqual([]);
  });
});
