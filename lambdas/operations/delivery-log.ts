/** The workspace delivery log (docs/behaviour.md#workspace-delivery-log). */
import { clampLimit } from '../contract/pagination';
import { deliveryLogFilter } from '../domain/delivery-log';
import { listDeliveryLog } from '../store/delivery-log';
import type { OperationImpl } from './context';

/** GET /workspaces/{slug}/deliveries: the caller's workspace only; filters combine. */
export const listDeliveries: OperationImpl<'listDeliveries'> = async (deps, caller, { query }) =>
  listDeliveryLog(deps.table, caller.workspace, deliveryLogFilter(query), clampLimit(query.limit), query.cursor);
