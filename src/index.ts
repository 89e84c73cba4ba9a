export {
  CORE_ERROR,
  EventBus,
  dateFromUnixNano,
  isEventId,
  newEventId,
  nowUnixNano,
  unixNanoFromDate,
} from './bus/index.js';
export type {
  BusEvent,
  Causation,
  CausationContext,
  CoreErrorPayload,
  CurrentCausation,
  EmitOptions,
  EventBusOptions,
  EventHandler,
  EventInit,
  SubscribeOptions,
  VetoablePayload,
  VetoDecision,
} from './bus/index.js';
export {
  BEFORE_TOOL_RESULT,
  TOOL_INVOKE,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
} from './events/index.js';
export type {
  ToolCall,
  ToolResult,
  ToolStreamBase,
  ToolStreamPartial,
  ToolStreamProgress,
} from './events/index.js';
