/** Lambda entry of `listAuditEvents` (REST). */
import { restHandler } from '../http/rest-handler';
import { listAuditEvents } from '../operations/workspace';

export const handler = restHandler('listAuditEvents', listAuditEvents);
