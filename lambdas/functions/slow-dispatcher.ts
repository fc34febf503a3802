/**
 * Lambda entry of the slow lane's dispatcher (docs/behaviour.md#delivery-lanes): the same
 * dispatcher as the delivery queue's, consuming the slow lane's queue with its own concurrency,
 * and capping each batch per endpoint and per workspace.
 */
import { dispatcherHandler } from './dispatcher';

/** The SQS handler of the slow lane. */
export const handler = dispatcherHandler('slow');
