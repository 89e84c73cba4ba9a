import {
  createNoopMeter,
  type Attributes,
  type Histogram,
  type Meter,
  type MeterProvider,
  type ObservableResult,
  type UpDownCounter,
} from '@opentelemetry/api';
import { VERSION } from '../version.js';
import type { McpOperation } from './tool-calls/mcp-operation.js';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  CHAT,
  EXECUTE_TOOL,
  INVOKE_AGENT,
  TOOL_TYPE_FUNCTION,
  type EndReason,
} from './attribute-names.js';

/** `gen_ai.execute_tool.duration`: how long tool calls take, in seconds. */
export const METRIC_TOOL_DURATION = 'gen_ai.execute_tool.duration';
/** `gen_ai.invoke_agent.duration`: how long turns and sub-agents take, in seconds. */
export const METRIC_AGENT_DURATION = 'gen_ai.invoke_agent.duration';
/** `gen_ai.client.operation.duration`: how long model calls take, in seconds. */
export const METRIC_CLIENT_DURATION = 'gen_ai.client.operation.duration';
/** `gen_ai.client.token.usage`: tokens per model call, by `gen_ai.token.type`. */
export const METRIC_TOKEN_USAGE = 'gen_ai.client.token.usage';
/** `tooltrace.tool.time_to_first_partial`: invoke to first partial output, in seconds. */
export const METRIC_TIME_TO_FIRST_PARTIAL = 'tooltrace.tool.time_to_first_partial';
/** `tooltrace.tool.stream.events`: progress and partial events per call. */
export const METRIC_STREAM_EVENTS = 'tooltrace.tool.stream.events';
/** `tooltrace.tool.calls.in_flight`: tool calls started and not yet ended. */
export const METRIC_CALLS_IN_FLIGHT = 'tooltrace.tool.calls.in_flight';

/**
 * `tooltrace.tool.events.dropped`: stream events and results the tracer did not record as they
 * came, by `tooltrace.drop.reason`: `late` (after their call's span ended), `duplicate`,
 * `unpaired` (naming no call), `coalesced` (only counted in the span's summary), `producer`
 * (let go before the bus, `tooltrace.stream.events.dropped`).
 */
export const METRIC_EVENTS_DROPPED = 'tooltrace.tool.events.dropped';
/** `tooltrace.drop.reason` on {@link METRIC_EVENTS_DROPPED}. */
export const ATTR_DROP_REASON = 'tooltrace.drop.reason';

/** `mcp.client.operation.duration`: an MCP request as its sender saw it, in seconds. */
export const METRIC_MCP_CLIENT_OPERATION_DURATION = 'mcp.client.operation.duration';
/** `mcp.server.operation.duration`: an MCP request as its receiver saw it, in seconds. */
export const METRIC_MCP_SERVER_OPERATION_DURATION = 'mcp.server.operation.duration';

/** `gen_ai.token.type` on `gen_ai.client.token.usage`. */
const ATTR_TOKEN_TYPE = 'gen_ai.token.type';

/** The GenAI conventions' bucket boundaries for operation durations, in seconds. */
const DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
/** The GenAI conventions' bucket boundaries for token counts. */
const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
/** The MCP conventions' bucket boundaries for operation durations, in seconds. */
const MCP_DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
const STREAM_EVENT_BUCKETS = [0, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];
const NANOS_PER_SECOND = 1e9;

/** What a finished tool call tells its instruments. */
export interface CallMeasurement {
  readonly toolName: string;
  readonly agentName: string;
  readonly startUnixNano: bigint;
  readonly endUnixNano: bigint;
  /** `''` on success; `cancelled`, `abandoned`, the result's kind or `_OTHER` otherwise. */
  readonly errorType: string;
  /** Invoke to first partial, `undefined` without partials. */
  readonly firstPartialUnixNano: bigint | undefined;
  readonly streamEvents: number;
}

/** What a finished model call tells its instruments. */
export interface ChatMeasurement {
  readonly agentName: string;
  readonly requestModel: string;
  readonly responseModel: string;
  readonly startUnixNano: bigint;
  readonly endUnixNano: bigint;
  readonly errorType: string;
  readonly inputTokens: number | undefined;
  readonly outputTokens: number | undefined;
}

/**
 * The instruments the subscriber records beside its spans, from the GenAI conventions
 * (`gen_ai.execute_tool.duration`, `gen_ai.invoke_agent.duration`,
 * `gen_ai.client.operation.duration`, `gen_ai.client.token.usage`) and tooltrace's own for
 * streams (`tooltrace.tool.time_to_first_partial`, `tooltrace.tool.stream.events`,
 * `tooltrace.tool.calls.in_flight`), and for a call an MCP adapter marked as a `tools/call` the
 * MCP conventions' `mcp.client.operation.duration` or `mcp.server.operation.duration`. A call is
 * measured once, when its span ends with its result
 * or for idleness; one cut short by eviction or shutdown is not (its result, should it come in
 * a later run, counts then). In-flight snapshots, duplicates and late events never reach here.
 * With no meter provider registered, the API's no-op meter records nothing, and the subscriber
 * skips building what it would have been given ({@link AgentMetrics.recording}).
 */
export class AgentMetrics {
  /**
   * Whether the meter records anything: `false` for the API's no-op meter (no meter provider
   * registered, or a sidecar exporting no metrics), where building a call's measurement and its
   * attributes would be work thrown away.
   */
  readonly recording: boolean;
  readonly #toolDuration: Histogram;
  readonly #agentDuration: Histogram;
  readonly #clientDuration: Histogram;
  readonly #tokenUsage: Histogram;
  readonly #firstPartial: Histogram;
  readonly #streamEvents: Histogram;
  readonly #inFlight: UpDownCounter;
  readonly #mcpClientDuration: Histogram;
  readonly #mcpServerDuration: Histogram;
  readonly #meter: Meter;

  constructor(provider: MeterProvider) {
    const meter = provider.getMeter('tooltrace', VERSION);
    this.#meter = meter;
    this.recording = meter !== createNoopMeter();
    const seconds = (name: string, description: string): Histogram =>
      meter.createHistogram(name, {
        unit: 's',
        description,
        advice: { explicitBucketBoundaries: DURATION_BUCKETS },
      });
    this.#toolDuration = seconds(METRIC_TOOL_DURATION, 'Duration of tool calls.');
    this.#agentDuration = seconds(METRIC_AGENT_DURATION, 'Duration of agent turns and sub-agents.');
    this.#clientDuration = seconds(METRIC_CLIENT_DURATION, 'Duration of model calls.');
    this.#firstPartial = seconds(
      METRIC_TIME_TO_FIRST_PARTIAL,
      'Time from a tool call to its first partial output.',
    );
    this.#tokenUsage = meter.createHistogram(METRIC_TOKEN_USAGE, {
      unit: '{token}',
      description: 'Tokens used per model call, input and output.',
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    });
    this.#streamEvents = meter.createHistogram(METRIC_STREAM_EVENTS, {
      unit: '{event}',
      description: 'Progress and partial events a tool call published.',
      advice: { explicitBucketBoundaries: STREAM_EVENT_BUCKETS },
    });
    this.#inFlight = meter.createUpDownCounter(METRIC_CALLS_IN_FLIGHT, {
      unit: '{call}',
      description: 'Tool calls started and not yet ended.',
    });
    const mcpSeconds = (name: string, description: string): Histogram =>
      meter.createHistogram(name, {
        unit: 's',
        description,
        advice: { explicitBucketBoundaries: MCP_DURATION_BUCKETS },
      });
    this.#mcpClientDuration = mcpSeconds(
      METRIC_MCP_CLIENT_OPERATION_DURATION,
      'The duration of an MCP request as the client saw it, from sending it to the response.',
    );
    this.#mcpServerDuration = mcpSeconds(
      METRIC_MCP_SERVER_OPERATION_DURATION,
      'The duration of an MCP request as the server saw it, from receiving it to the answer.',
    );
  }

  /**
   * Reports the tracer's drop counters as {@link METRIC_EVENTS_DROPPED} whenever the meter is
   * read; `read` gives the running totals by reason. Returns a function that stops it.
   */
  observeDrops(read: () => Readonly<Record<string, number>>): () => void {
    if (!this.recording) return () => {};
    const counter = this.#meter.createObservableCounter(METRIC_EVENTS_DROPPED, {
      unit: '{event}',
      description: 'Tool stream events and results not recorded as they came, by reason.',
    });
    const callback = (result: ObservableResult): void => {
      for (const [reason, count] of Object.entries(read())) {
        result.observe(count, { [ATTR_DROP_REASON]: reason });
      }
    };
    counter.addCallback(callback);
    return () => counter.removeCallback(callback);
  }

  /** A call's span started: one more in flight under `toolName`. */
  callStarted(toolName: string): void {
    if (!this.recording) return;
    this.#inFlight.add(1, { [ATTR_GEN_AI_TOOL_NAME]: toolName });
  }

  /** A call's span ended for `reason`; `startedAs` is the name it was counted in flight under. */
  callEnded(call: CallMeasurement, reason: EndReason, startedAs: string): void {
    if (!this.recording) return;
    this.#inFlight.add(-1, { [ATTR_GEN_AI_TOOL_NAME]: startedAs });
    if (!isMeasured(reason)) return;
    const attributes: Attributes = {
      [ATTR_GEN_AI_OPERATION_NAME]: EXECUTE_TOOL,
      [ATTR_GEN_AI_TOOL_NAME]: call.toolName,
      [ATTR_GEN_AI_TOOL_TYPE]: TOOL_TYPE_FUNCTION,
    };
    if (call.agentName !== '') attributes[ATTR_GEN_AI_AGENT_NAME] = call.agentName;
    if (call.errorType !== '') attributes[ATTR_ERROR_TYPE] = call.errorType;
    this.#toolDuration.record(secondsBetween(call.startUnixNano, call.endUnixNano), attributes);
    const stream: Attributes = { [ATTR_GEN_AI_TOOL_NAME]: call.toolName };
    this.#streamEvents.record(call.streamEvents, stream);
    if (call.firstPartialUnixNano !== undefined) {
      this.#firstPartial.record(
        secondsBetween(call.startUnixNano, call.firstPartialUnixNano),
        stream,
      );
    }
  }

  /**
   * A call that is an MCP `tools/call` ended (a task: from `tools/call` to its result): its
   * duration on the side's MCP operation histogram, with the carried MCP attributes.
   */
  mcpCallEnded(call: CallMeasurement, operation: McpOperation, reason: EndReason): void {
    if (!this.recording || !isMeasured(reason)) return;
    const attributes: Attributes = {
      [ATTR_GEN_AI_OPERATION_NAME]: EXECUTE_TOOL,
      [ATTR_GEN_AI_TOOL_NAME]: call.toolName,
      ...operation.attributes,
    };
    if (call.errorType !== '') attributes[ATTR_ERROR_TYPE] = call.errorType;
    const histogram =
      operation.side === 'client' ? this.#mcpClientDuration : this.#mcpServerDuration;
    histogram.record(secondsBetween(call.startUnixNano, call.endUnixNano), attributes);
  }

  /** A turn or sub-agent span ended. */
  agentEnded(
    agentName: string,
    startUnixNano: bigint,
    endUnixNano: bigint,
    errorType: string,
    reason: EndReason,
  ): void {
    if (!this.recording || !isMeasured(reason)) return;
    const attributes: Attributes = { [ATTR_GEN_AI_OPERATION_NAME]: INVOKE_AGENT };
    if (agentName !== '') attributes[ATTR_GEN_AI_AGENT_NAME] = agentName;
    if (errorType !== '') attributes[ATTR_ERROR_TYPE] = errorType;
    this.#agentDuration.record(secondsBetween(startUnixNano, endUnixNano), attributes);
  }

  /** A model call's span ended. */
  chatEnded(chat: ChatMeasurement, reason: EndReason): void {
    if (!this.recording || !isMeasured(reason)) return;
    const attributes: Attributes = { [ATTR_GEN_AI_OPERATION_NAME]: CHAT };
    if (chat.requestModel !== '') attributes[ATTR_GEN_AI_REQUEST_MODEL] = chat.requestModel;
    if (chat.responseModel !== '') attributes[ATTR_GEN_AI_RESPONSE_MODEL] = chat.responseModel;
    if (chat.agentName !== '') attributes[ATTR_GEN_AI_AGENT_NAME] = chat.agentName;
    const tokens = { ...attributes };
    if (chat.errorType !== '') attributes[ATTR_ERROR_TYPE] = chat.errorType;
    this.#clientDuration.record(secondsBetween(chat.startUnixNano, chat.endUnixNano), attributes);
    if (chat.inputTokens !== undefined) {
      this.#tokenUsage.record(chat.inputTokens, { ...tokens, [ATTR_TOKEN_TYPE]: 'input' });
    }
    if (chat.outputTokens !== undefined) {
      this.#tokenUsage.record(chat.outputTokens, { ...tokens, [ATTR_TOKEN_TYPE]: 'output' });
    }
  }
}

/**
 * Whether a span that ended for `reason` is measured: one cut short by eviction or shutdown is
 * not, since its result may still come (a sidecar restarted from its checkpoint reads it again).
 */
function isMeasured(reason: EndReason): boolean {
  return reason !== 'evicted' && reason !== 'shutdown';
}

function secondsBetween(startUnixNano: bigint, endUnixNano: bigint): number {
  return Math.max(0, Number(endUnixNano - startUnixNano)) / NANOS_PER_SECOND;
}
