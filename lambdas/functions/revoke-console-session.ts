/** Lambda entry of `revokeConsoleSession` (REST). */
import { restFunction } from '../composition/rest-function';
import { revokeConsoleSession } from '../operations/staff-sessions';

export const handler = restFunction('revokeConsoleSession', revokeConsoleSession);
