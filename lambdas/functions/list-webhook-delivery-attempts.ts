/** Lambda entry of `listWebhookDeliveryAttempts` (REST). */
import { restHandler } from '../http/rest-handler';
import { listWebhookDeliveryAttempts } from '../operations/deliveries';

export const handler = restHandler('listWebhookDeliveryAttempts', listWebhookDeliveryAttempts);
