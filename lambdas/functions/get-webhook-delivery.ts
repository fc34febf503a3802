/** Lambda entry of `getWebhookDelivery` (REST). */
import { restFunction } from '../composition/rest-function';
import { getWebhookDelivery } from '../operations/deliveries';

export const handler = restFunction('getWebhookDelivery', getWebhookDelivery);
