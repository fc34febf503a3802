/** Lambda entry of `listWebhookDeliveries` (REST). */
import { restFunction } from '../composition/rest-function';
import { listWebhookDeliveries } from '../operations/deliveries';

export const handler = restFunction('listWebhookDeliveries', listWebhookDeliveries);
