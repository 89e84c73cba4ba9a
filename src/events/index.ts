export {
  BEFORE_TOOL_RESULT,
  CORE_ERROR,
  TOOL_INVOKE,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
} from './event-names.js';
export type {
  ToolCall,
  ToolResult,
  ToolStreamBase,
  ToolStreamPartial,
  ToolStreamProgress,
} from './payloads.js';
