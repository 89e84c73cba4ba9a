export { bridge } from './bridge.js';
export type { BridgeOptions } from './bridge.js';
export type { ChannelTool } from './channel-tool.js';
export { toChannelTool } from './request-response-tool.js';
export type { RequestResponseTool } from './request-response-tool.js';
export { StreamingToolPlugin } from './streaming-tool-plugin.js';
export type { StreamingToolPluginOptions, ToolFactory } from './streaming-tool-plugin.js';
export { ToolChannel } from './tool-channel.js';
export type { ToolChannelOptions, ToolEventDetails } from './tool-channel.js';
export type { ToolEvent, ToolEventKind } from './tool-event.js';
export type {
  ToolContext,
  ToolInputMethod,
  ToolInputRequest,
  ToolInputResponse,
} from './tool-context.js';
export { declareAnsweredTools, ERROR_TYPE_UNKNOWN_TOOL } from './tool-answerers.js';
export type { AnsweredTools } from './tool-answerers.js';
