/** Lambda entry of `createConsoleNonce` (REST, public). */
import { restFunction } from '../composition/rest-function';
import { staffSignInRuntime } from '../composition/staff-sign-in';
import { createConsoleNonce } from '../operations/staff-sessions';

export const handler = restFunction('createConsoleNonce', createConsoleNonce, staffSignInRuntime);
