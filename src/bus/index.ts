export type { BusEvent, Causation, CausationContext, EmitOptions, EventInit } from './bus-event.js';
export { EventBus, CORE_ERROR } from './event-bus.js';
export type {
  CoreErrorPayload,
  CurrentCausation,
  EventBusOptions,
  EventHandler,
  SubscribeOptions,
  VetoablePayload,
  VetoDecision,
} from './event-bus.js';
export { isEventId, newEventId } from './event-id.js';
export { dateFromUnixNano, nowUnixNano, unixNanoFromDate } from './clock.js';
