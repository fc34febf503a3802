/** Lambda entry of the stuck-pending repair schedule. */
import { defaultRuntime, logger } from '../composition/runtime';
import { runPendingRepair } from '../pipeline/schedules';

export async function handler(): Promise<{ requeued: number }> {
  const result = await runPendingRepair(defaultRuntime().deps);
  if (result.requeued > 0) logger.warn('Re-queued stuck pending deliveries', result);
  return result;
}
