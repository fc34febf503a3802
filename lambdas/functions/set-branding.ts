/** Lambda entry of `setBranding` (REST). */
import { restFunction } from '../composition/rest-function';
import { setBranding } from '../operations/portal-sessions';

export const handler = restFunction('setBranding', setBranding);
