/** Lambda entry of `getWebhook` (REST). */
import { restFunction } from '../composition/rest-function';
import { getWebhook } from '../operations/webhooks';

export const handler = restFunction('getWebhook', getWebhook);
