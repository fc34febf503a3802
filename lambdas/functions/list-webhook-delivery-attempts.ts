/** Lambda entry of `listWebhookDeliveryAttempts` (REST). */
import { restFunction } from '../composition/rest-function';
import { listWebhookDeliveryAttempts } from '../operations/deliveries';

export const handler = restFunction('listWebhookDeliveryAttempts', listWebhookDeliveryAttempts);
