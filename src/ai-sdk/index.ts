export { traceAiSdkTools } from './trace-ai-sdk-tools.js';
export type { AiSdkToolCallOptions, TraceAiSdkToolsOptions } from './trace-ai-sdk-tools.js';
