/** Lambda entry of `createConsoleSession` (REST, public). */
import { restFunction } from '../composition/rest-function';
import { createConsoleSession } from '../operations/staff-sessions';

export const handler = restFunction('createConsoleSession', createConsoleSession);
