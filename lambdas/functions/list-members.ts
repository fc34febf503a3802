/** Lambda entry of `listMembers` (REST). */
import { restHandler } from '../http/rest-handler';
import { listMembers } from '../operations/workspace';

export const handler = restHandler('listMembers', listMembers);
