/** Lambda entry of `listPortalSessions` (REST). */
import { restFunction } from '../composition/rest-function';
import { listPortalSessions } from '../operations/portal-sessions';

export const handler = restFunction('listPortalSessions', listPortalSessions);
