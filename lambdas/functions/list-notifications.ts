/** Lambda entry of `listNotifications` (REST). */
import { restHandler } from '../http/rest-handler';
import { listNotifications } from '../operations/workspace';

export const handler = restHandler('listNotifications', listNotifications);
