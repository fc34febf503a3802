/** Lambda entry of `createConsoleSession` (REST, public). */
import { restFunction } from '../composition/rest-function';
import { staffSignInRuntime } from '../composition/staff-sign-in';
import { createConsoleSession } from '../operations/staff-sessions';

export const handler = restFunction('createConsoleSession', createConsoleSession, staffSignInRuntime);
