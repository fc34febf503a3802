/** Lambda entry of `getBranding` (REST). */
import { restFunction } from '../composition/rest-function';
import { getBranding } from '../operations/portal-sessions';

export const handler = restFunction('getBranding', getBranding);
