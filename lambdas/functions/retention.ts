/** Lambda entry of the daily retention schedule. */
import { defaultRuntime, logger } from '../composition/runtime';
import { runRetention } from '../pipeline/schedules';

export async function handler(): Promise<{ deleted: number }> {
  const result = await runRetention(defaultRuntime().deps);
  logger.info('Retention pass', result);
  return result;
}
