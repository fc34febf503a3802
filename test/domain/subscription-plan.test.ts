/** The step plan of an endpoint change's subscription items (docs/architecture.md#subscriptions): pure, no table. */
import { describe, expect, it } from 'vitest';
import {
  MAX_TRANSACTION_ITEMS,
  planSubscriptionSteps,
  SUBSCRIPTION_OPS_PER_STEP,
  type SubscriptionState,
} from '../../lambdas/domain/subscription-plan';

const types = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `t.n${String(from + i).padStart(3, '0')}`);

describe('planSubscriptionSteps', () => {
  const state = (eventTypes: string[], enabled = true): SubscriptionState => ({ eventTypes, enabled });

  it('plans one step for any change that fits one transaction', () => {
    expect(SUBSCRIPTION_OPS_PER_STEP).toBe(MAX_TRANSACTION_ITEMS - 6);
    expect(planSubscriptionSteps(null, state(types(94)), { rewriteEnabled: false })).toHaveLength(1);
    const [step] = planSubscriptionSteps(state(['a', 'b']), state(['b', 'c']), { rewriteEnabled: false });
    expect(step!.ops).toEqual([
      { eventType: 'a', kind: 'delete', enabled: true },
      { eventType: 'c', kind: 'put', enabled: true },
    ]);
    expect(step!.state).toEqual(state(['b', 'c']));
    // A sent `enabled` rewrites every kept copy, even unchanged (it repairs a copy an auto-disable left behind).
    expect(planSubscriptionSteps(state(['a']), state(['a'], false), { rewriteEnabled: true })[0]!.ops).toEqual([
      { eventType: 'a', kind: 'put', enabled: false },
    ]);
    expect(planSubscriptionSteps(state(['a']), state(['a']), { rewriteEnabled: true })[0]!.ops).toEqual([
      { eventType: 'a', kind: 'put', enabled: true },
    ]);
    expect(planSubscriptionSteps(state(['a']), state(['a']), { rewriteEnabled: false })).toEqual([{ ops: [], state: state(['a']) }]);
    // A changed flag rewrites every kept copy even when `enabled` was not sent (it changed by another way).
    expect(planSubscriptionSteps(state(['a', 'b']), state(['b', 'c'], false), { rewriteEnabled: false })[0]!.ops).toEqual([
      { eventType: 'a', kind: 'delete', enabled: false },
      { eventType: 'b', kind: 'put', enabled: false },
      { eventType: 'c', kind: 'put', enabled: false },
    ]);
    expect(planSubscriptionSteps(null, state(['a'], false), { rewriteEnabled: false })).toEqual([
      { ops: [{ eventType: 'a', kind: 'put', enabled: false }], state: state(['a'], false) },
    ]);
    expect(planSubscriptionSteps(state(['a', 'b']), null, { rewriteEnabled: false })).toEqual([
      {
        ops: [
          { eventType: 'a', kind: 'delete', enabled: true },
          { eventType: 'b', kind: 'delete', enabled: true },
        ],
        state: null,
      },
    ]);
    expect(planSubscriptionSteps(state(['a'], false), null, { rewriteEnabled: true })[0]!.ops).toEqual([
      { eventType: 'a', kind: 'delete', enabled: false },
    ]);
    expect(planSubscriptionSteps(null, null, { rewriteEnabled: true })).toEqual([{ ops: [], state: null }]);
  });

  it('splits a larger change into steps that each leave the endpoint and its items agreeing, disabling first and enabling last', () => {
    for (const [from, to] of [
      [state(types(100, 0), true), state(types(100, 100), false)],
      [state(types(100, 0), false), state(types(100, 50), true)],
      [null, state(types(100), true)],
      [state(types(100), true), null],
    ] as const) {
      const steps = planSubscriptionSteps(from, to, { rewriteEnabled: true, perStep: 30 });
      expect(steps.length).toBeGreaterThan(1);
      let items = new Map((from?.eventTypes ?? []).map((t) => [t, from!.enabled]));
      for (const step of steps) {
        expect(step.ops.length).toBeLessThanOrEqual(30);
        for (const op of step.ops) {
          if (op.kind === 'delete') items.delete(op.eventType);
          else items.set(op.eventType, op.enabled);
        }
        if (step.state === null) {
          expect(items.size).toBe(0);
          continue;
        }
        // The items are exactly the endpoint's types after every step...
        expect([...items.keys()].sort()).toEqual([...step.state.eventTypes].sort());
        // ...and an enabled endpoint never has an item that says disabled (its event would be held).
        if (step.state.enabled) expect([...items.values()].every(Boolean)).toBe(true);
      }
      expect(steps.at(-1)!.state).toEqual(to);
      items = new Map();
    }
  });
});
