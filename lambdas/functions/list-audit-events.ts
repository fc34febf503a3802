/** Lambda entry of `listAuditEvents` (REST). */
import { restFunction } from '../composition/rest-function';
import { listAuditEvents } from '../operations/workspace';

export const handler = restFunction('listAuditEvents', listAuditEvents);
