/** Lambda entry of `recoverWebhookDeliveries` (REST). */
import { restFunction } from '../composition/rest-function';
import { recoverWebhookDeliveries } from '../operations/recovery';

export const handler = restFunction('recoverWebhookDeliveries', recoverWebhookDeliveries);
