/** A REST function's handler: the operation behind the REST middlewares, on the container's runtime and logger. */
import type { OperationId } from '../contract/operations';
import { restHandler } from '../http/rest-handler';
import type { SurfaceRuntime } from '../operations/context';
import type { AnyOperationImpl } from '../operations/platform-context';
import { defaultRuntime, logger } from './runtime';

/**
 * The Lambda handler of one contract operation, wired to the container's adapters (`runtime`:
 * another composition of them, for the few functions that need more).
 */
export function restFunction<K extends OperationId>(
  operationId: K,
  impl: AnyOperationImpl<K>,
  runtime: () => SurfaceRuntime = defaultRuntime,
) {
  return restHandler(operationId, impl, { runtime, logger });
}
