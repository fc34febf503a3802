/** Lambda entry of `listConsoleSessions` (REST). */
import { restFunction } from '../composition/rest-function';
import { listConsoleSessions } from '../operations/staff-sessions';

export const handler = restFunction('listConsoleSessions', listConsoleSessions);
