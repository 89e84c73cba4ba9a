export { TooltraceCallbackHandler } from './tooltrace-callback-handler.js';
export type {
  LangChainTracingStats,
  TooltraceCallbackHandlerOptions,
} from './tooltrace-callback-handler.js';
export { traceLangChainTools } from './trace-langchain-tools.js';
