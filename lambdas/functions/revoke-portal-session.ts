/** Lambda entry of `revokePortalSession` (REST). */
import { restFunction } from '../composition/rest-function';
import { revokePortalSession } from '../operations/portal-sessions';

export const handler = restFunction('revokePortalSession', revokePortalSession);
