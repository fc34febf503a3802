/** Lambda entry of `listWebhookDeliveries` (REST). */
import { restHandler } from '../http/rest-handler';
import { listWebhookDeliveries } from '../operations/deliveries';

export const handler = restHandler('listWebhookDeliveries', listWebhookDeliveries);
