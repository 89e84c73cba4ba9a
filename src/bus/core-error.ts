/** Type of the event the bus emits when a handler throws or rejects. */
export const CORE_ERROR = 'core.error';

/** Payload of `core.error`. */
export interface CoreErrorPayload {
  error: unknown;
  message: string;
  /** Type of the event whose handler failed. */
  eventType: string;
  /** Id of the event whose handler failed. */
  eventId: string;
  /** `source` of the failing subscription, `''` when it gave none. */
  source: string;
}
