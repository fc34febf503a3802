/** Lambda entry of `exchangePortalSession` (REST, public). */
import { restFunction } from '../composition/rest-function';
import { exchangePortalSession } from '../operations/portal-sessions';

export const handler = restFunction('exchangePortalSession', exchangePortalSession);
