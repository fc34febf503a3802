/** Lambda entry of `listEventTypes` (REST). */
import { restHandler } from '../http/rest-handler';
import { listEventTypes } from '../operations/workspace';

export const handler = restHandler('listEventTypes', listEventTypes);
