/** An agent asks a tool to run; payload {@link ToolCall}. */
export const TOOL_INVOKE = 'tool.invoke';
/** The final outcome of a tool call; payload {@link ToolResult}. */
export const TOOL_RESULT = 'tool.result';
/** Vetoable, emitted just before `tool.result`; a veto suppresses the result. */
export const BEFORE_TOOL_RESULT = 'before:tool.result';
/** A streaming tool reports progress; payload {@link ToolStreamProgress}. */
export const TOOL_STREAM_PROGRESS = 'tool.stream.progress';
/** A streaming tool publishes partial output; payload {@link ToolStreamPartial}. */
export const TOOL_STREAM_PARTIAL = 'tool.stream.partial';
/** A handler threw or rejected; payload `CoreErrorPayload`. */
export { CORE_ERROR } from '../bus/core-error.js';

/**
 * `tooltrace.stream.events.dropped`: a span attribute a producer puts on a call's `tool.result`
 * (its `attributes`) when it let stream events go before they reached the bus — an MCP call's
 * progress burst coalesced to its newest value, for instance. The tracer adds it up in
 * `stats().streamEventsDropped`.
 */
export const ATTR_STREAM_EVENTS_DROPPED = 'tooltrace.stream.events.dropped';
