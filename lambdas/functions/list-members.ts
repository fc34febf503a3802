/** Lambda entry of `listMembers` (REST). */
import { restFunction } from '../composition/rest-function';
import { listMembers } from '../operations/workspace';

export const handler = restFunction('listMembers', listMembers);
