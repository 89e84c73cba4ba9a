export type { BusEvent, Causation, CausationContext, EmitOptions, EventInit } from './bus-event.js';
export { CORE_ERROR } from './core-error.js';
export type { CoreErrorPayload } from './core-error.js';
export { EventBus } from './event-bus.js';
export type { CurrentCausation, EventBusOptions } from './event-bus.js';
export type { EventHandler, SubscribeOptions } from './subscribe-options.js';
export type { VetoablePayload, VetoDecision } from './veto.js';
export { isEventId, newEventId } from './event-id.js';
export { dateFromUnixNano, nowUnixNano, unixNanoFromDate } from './clock.js';
