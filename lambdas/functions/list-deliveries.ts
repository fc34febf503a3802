/** Lambda entry of `listDeliveries` (REST). */
import { restFunction } from '../composition/rest-function';
import { listDeliveries } from '../operations/delivery-log';

export const handler = restFunction('listDeliveries', listDeliveries);
