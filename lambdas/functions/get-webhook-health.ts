/** Lambda entry of `getWebhookHealth` (REST). */
import { restFunction } from '../composition/rest-function';
import { getWebhookHealth } from '../operations/health';

export const handler = restFunction('getWebhookHealth', getWebhookHealth);
