/** Lambda entry of the grace-window expiry schedule. */
import { defaultRuntime, logger } from '../composition/runtime';
import { runSecretExpiry } from '../pipeline/schedules';

export async function handler(): Promise<{ expired: number }> {
  const result = await runSecretExpiry(defaultRuntime().deps);
  logger.info('Secret expiry pass', result);
  return result;
}
