/** Lambda entry of `listNotifications` (REST). */
import { restFunction } from '../composition/rest-function';
import { listNotifications } from '../operations/workspace';

export const handler = restFunction('listNotifications', listNotifications);
