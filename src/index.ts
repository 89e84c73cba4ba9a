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
export { StreamingToolPlugin, ToolChannel, bridge, toChannelTool } from './streamtool/index.js';
export type {
  BridgeOptions,
  ChannelTool,
  RequestResponseTool,
  StreamingToolPluginOptions,
  ToolChannelOptions,
  ToolEvent,
  ToolEventKind,
  ToolFactory,
} from './streamtool/index.js';
export {
  ChannelClosedError,
  ChannelFullError,
  MalformedToolEventError,
  PluginStateError,
  SequenceOrderError,
  ToolCancelledError,
  ToolStreamError,
  TooltraceError,
} from './errors/index.js';
export type { ChannelEnd } from './errors/index.js';
