/** Lambda entry of `ackNotification` (REST). */
import { restFunction } from '../composition/rest-function';
import { ackNotification } from '../operations/notifications';

export const handler = restFunction('ackNotification', ackNotification);
