/** Lambda entry of `getWebhookDelivery` (REST). */
import { restHandler } from '../http/rest-handler';
import { getWebhookDelivery } from '../operations/deliveries';

export const handler = restHandler('getWebhookDelivery', getWebhookDelivery);
