/** Lambda entry of `listWorkspaces` (REST). */
import { restFunction } from '../composition/rest-function';
import { listWorkspaces } from '../operations/staff-sessions';

export const handler = restFunction('listWorkspaces', listWorkspaces);
