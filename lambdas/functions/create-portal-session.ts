/** Lambda entry of `createPortalSession` (REST). */
import { restFunction } from '../composition/rest-function';
import { createPortalSession } from '../operations/portal-sessions';

export const handler = restFunction('createPortalSession', createPortalSession);
