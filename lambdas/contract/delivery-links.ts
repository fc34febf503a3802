/**
 * How deliveries link to each other and to their event (docs/behaviour.md#replay,
 * docs/behaviour.md#workspace-delivery-log): the number of replays a delivery's GET shows, and
 * the shape of an event id the log filters on. Zod-free, so functions import it without zod.
 */

/** Replays a delivery's GET lists: its newest ones, newest first. */
export const DELIVERY_REPLAYS_SHOWN = 10;

/** Longest event id the log's filter takes (the local stack's `POST /local/events` takes the same). */
export const EVENT_ID_MAX_LENGTH = 256;

/** An event id as the log's `eventId` filter takes it: printable ASCII, no spaces (an EventBridge id is a UUID). */
export const EVENT_ID_FILTER = /^[\x21-\x7e]+$/;
