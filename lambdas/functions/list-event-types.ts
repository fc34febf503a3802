/** Lambda entry of `listEventTypes` (REST). */
import { restFunction } from '../composition/rest-function';
import { listEventTypes } from '../operations/workspace';

export const handler = restFunction('listEventTypes', listEventTypes);
