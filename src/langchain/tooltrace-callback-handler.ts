import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { Serialized } from '@langchain/core/load/serializable';
import type { BaseMessage } from '@langchain/core/messages';
import type { LLMResult } from '@langchain/core/outputs';
import type { ChainValues } from '@langchain/core/utils/types';
import type { Causation, EmitOptions, EventBus, ScopeRunner } from '../bus/index.js';
import { captureContext } from '../bus/dispatch-context.js';
import { emitQuiet, emitVetoableQuiet } from '../bus/event-bus.js';
import {
  AGENT_TURN_END,
  AGENT_TURN_START,
  BEFORE_TOOL_RESULT,
  LLM_ERROR,
  LLM_REQUEST,
  LLM_RESPONSE,
  LLM_STREAM_CHUNK,
  SUBAGENT_COMPLETE,
  SUBAGENT_SPAWN,
  TOOL_RESULT,
  TOOL_STREAM_PARTIAL,
  TOOL_STREAM_PROGRESS,
  type LlmError,
  type LlmRequest,
  type LlmResponse,
  type LlmStreamChunk,
  type SubagentComplete,
  type SubagentSpawn,
  type ToolCall,
  type ToolResult,
  type ToolStreamPartial,
  type ToolStreamProgress,
  type TurnInfo,
} from '../events/index.js';
import { runAsInvokeHandler } from '../streamtool/run-as-invoke-handler.js';
import { messageOf } from '../streamtool/tool-output.js';
import {
  customEventType,
  declaredTools,
  isGraph,
  modelAnswer,
  progressOf,
  requestedModel,
  threadIdOf,
  toolArguments,
  toolEnd,
} from './langchain-payloads.js';
import { LangChainRuns, type Anchor, type Run, type RunKind } from './langchain-runs.js';
import { holdToolScope, releaseToolScope, toolDescriptionOf } from './tool-scopes.js';

/** Options for {@link TooltraceCallbackHandler}. */
export interface TooltraceCallbackHandlerOptions {
  /**
   * `source` of every event the handler emits.
   * @default 'langchain'
   */
  source?: string;
  /**
   * Runs followed at once at most; past it the oldest is forgotten (counted in
   * `stats().runsEvicted`; a span it opened is ended by the tracer's idle sweep). This is what
   * bounds runs whose end never comes and whose tree's root never ends either: the handler has
   * no timer of its own. An open tool run holds about 4.5 KB (its code's context scope), another
   * run about 0.6 KB.
   * @default 10000
   */
  maxOpenRuns?: number;
}

/** What {@link TooltraceCallbackHandler.stats} returns. */
export interface LangChainTracingStats {
  /**
   * Runs started and not ended yet (nor forgotten). The tracer's idle sweep and shutdown end
   * spans, not runs: a root run whose end never comes stays here until `maxOpenRuns` evicts it.
   */
  openRuns: number;
  /** Runs forgotten because more than `maxOpenRuns` were open. */
  runsEvicted: number;
  /**
   * Runs forgotten, without their end, because the root run of their tree ended first (their
   * spans are left to the tracer's idle sweep, `tooltrace.end_reason=abandoned`).
   */
  runsAbandoned: number;
  /** Events about a run the handler does not follow (never started, ended, or forgotten): dropped. */
  unknownRuns: number;
  /** Starts of a run already started (the handler given twice): ignored, so one span per run. */
  duplicateRuns: number;
  /** Failures of the handler's own code, contained so they never reach LangChain. */
  errors: number;
}

/** A turn, sub-agent, tool or chat run: what its start emitted, which its children hang on. */
type SpanKind = Exclude<RunKind, 'chain'>;

/**
 * A LangChain callback handler that puts LangChain and LangGraph runs on a tooltrace bus, so
 * `traceToolCalls` draws them as it draws tooltrace's own agents: a LangGraph graph run is a turn
 * (`invoke_agent`), a graph run inside another run a sub-agent, each chat model run a `chat` span
 * with its model and token usage, each tool run an `execute_tool` span (the `ToolCall`'s id as the
 * call id, else the run id) with every chunk a generator tool yields as `tool.stream.partial`, every
 * custom event dispatched inside the tool as a stream event (`tool.stream.progress` when its data
 * carries a numeric `progress` from 0 to 1, else an event named after it) and its end as
 * `tool.result` (an error as a failed result, `error.type` the error's name). The run tree
 * (`parentRunId`) is the causation. Pass it as `callbacks: [handler]`, like any LangChain tracer.
 *
 * The handler is awaited (`awaitHandlers`), so the events carry the times the runs had; it never
 * throws into LangChain. A callback cannot make the tool's code run inside its span: wrap the
 * tools with `traceLangChainTools` for that (its HTTP calls and own spans then nest under it).
 */
export class TooltraceCallbackHandler extends BaseCallbackHandler {
  /** The handler's name, as LangChain lists its handlers. */
  name = 'tooltrace';
  readonly #bus: EventBus;
  readonly #source: string;
  readonly #runs: LangChainRuns;
  #unknownRuns = 0;
  #duplicateRuns = 0;
  #errors = 0;

  constructor(bus: EventBus, options: TooltraceCallbackHandlerOptions = {}) {
    super({ _awaitHandler: true });
    if (bus === null || typeof bus !== 'object' || typeof bus.emitVetoable !== 'function') {
      throw new TypeError('TooltraceCallbackHandler needs an EventBus as its first argument');
    }
    const maxOpenRuns = options.maxOpenRuns ?? 10_000;
    if (!Number.isSafeInteger(maxOpenRuns) || maxOpenRuns < 1) {
      throw new RangeError(
        `TooltraceCallbackHandler option maxOpenRuns must be a positive integer, got ${String(maxOpenRuns)}`,
      );
    }
    this.#bus = bus;
    this.#source = options.source ?? 'langchain';
    this.#runs = new LangChainRuns(maxOpenRuns);
  }

  /** The same handler: its state is keyed by run id, so every copy LangChain makes shares it. */
  override copy(): this {
    return this;
  }

  /** Counts of what the handler followed, forgot and dropped. */
  stats(): LangChainTracingStats {
    return {
      openRuns: this.#runs.size,
      runsEvicted: this.#runs.evicted,
      runsAbandoned: this.#runs.abandoned,
      unknownRuns: this.#unknownRuns,
      duplicateRuns: this.#duplicateRuns,
      errors: this.#errors,
    };
  }

  /**
   * LangChain calls this as `(chain, inputs, runId, parentRunId, tags, metadata, runType,
   * runName)`, not in the order its type declares; the parameters are named for the call.
   */
  override handleChainStart(
    chain: Serialized,
    _inputs: ChainValues,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    _runType?: string,
    runName?: string,
  ): void {
    this.#contain(() => {
      if (this.#isDuplicate(runId)) return;
      const parent = this.#runs.get(parentRunId);
      if (!isGraph(chain)) {
        this.#add(runId, parent === undefined ? rootChain(runId) : passOn(parent));
        return;
      }
      const name = runName !== undefined && runName !== '' ? runName : 'LangGraph';
      // A graph inside a tool or another graph is a sub-agent; any other graph run is a turn.
      if (parent?.anchor === undefined) {
        this.#startTurn(runId, name, threadIdOf(metadata), parent?.rootId ?? runId);
      } else {
        this.#startSubagent(runId, name, parent);
      }
    });
  }

  /** A chain run ended: a turn's `agent.turn.end`, a sub-agent's `subagent.complete`. */
  override handleChainEnd(_outputs: ChainValues, runId: string): void {
    this.#contain(() => this.#endChain(runId, undefined));
  }

  /** A chain run failed: ends it as `handleChainEnd` does (a sub-agent with its error). */
  override handleChainError(error: Error, runId: string): void {
    this.#contain(() => this.#endChain(runId, error));
  }

  /** A chat model run: `llm.request` with the model and the tools it was given. */
  override handleChatModelStart(
    llm: Serialized,
    _messages: BaseMessage[][],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): void {
    this.#contain(() => this.#startModel(llm, runId, parentRunId, extraParams, metadata, runName));
  }

  /** A text-completion model run: `llm.request`, as for a chat model. */
  override handleLLMStart(
    llm: Serialized,
    _prompts: string[],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): void {
    this.#contain(() => this.#startModel(llm, runId, parentRunId, extraParams, metadata, runName));
  }

  /** A streamed token: `llm.stream.chunk` (counted on the chat span, never a span event each). */
  override handleLLMNewToken(
    _token: string,
    index: { prompt: number; completion: number },
    runId: string,
  ): void {
    this.#contain(() => {
      const run = this.#known(runId, 'chat');
      if (run === undefined) return;
      const chunk: LlmStreamChunk = { requestId: runId, index: index?.completion ?? 0 };
      if (run.turnId !== '') chunk.turnId = run.turnId;
      this.#emit(LLM_STREAM_CHUNK, chunk, run, run.anchor);
    });
  }

  /** A model run ended: `llm.response` with the response model, tokens, finish reason and tool calls. */
  override handleLLMEnd(output: LLMResult, runId: string): void {
    this.#contain(() => {
      const run = this.#take(runId, 'chat');
      if (run === undefined) return;
      const answer = modelAnswer(output);
      const response: LlmResponse = { requestId: runId };
      const model = answer.model ?? run.model;
      if (model !== undefined && model !== '') response.model = model;
      if (run.turnId !== '') response.turnId = run.turnId;
      if (answer.content !== undefined) response.content = answer.content;
      if (answer.toolCalls !== undefined) response.toolCalls = answer.toolCalls;
      if (answer.usage !== undefined) response.usage = answer.usage;
      if (answer.finishReason !== undefined) response.finishReason = answer.finishReason;
      this.#emit(LLM_RESPONSE, response, run, run.anchor);
    });
  }

  /** A model run failed: `llm.error`, `error.type` the error's name. */
  override handleLLMError(error: Error, runId: string): void {
    this.#contain(() => {
      const run = this.#take(runId, 'chat');
      if (run === undefined) return;
      const failure: LlmError = { requestId: runId, error: messageOf(error) };
      if (run.turnId !== '') failure.turnId = run.turnId;
      if (error instanceof Error && error.name !== '') failure.errorType = error.name;
      this.#emit(LLM_ERROR, failure, run, run.anchor);
    });
  }

  /** A tool run: `tool.invoke` (the `ToolCall`'s id as the call id, else the run id). */
  override handleToolStart(
    tool: Serialized,
    input: string,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    _metadata?: Record<string, unknown>,
    runName?: string,
    toolCallId?: string,
  ): void {
    this.#contain(() => {
      if (this.#isDuplicate(runId)) return;
      const parent = this.#runs.get(parentRunId);
      const id = (tool as { id?: unknown } | undefined)?.id;
      const name =
        runName !== undefined && runName !== ''
          ? runName
          : Array.isArray(id) && typeof id.at(-1) === 'string'
            ? (id.at(-1) as string)
            : 'tool';
      const call: ToolCall = {
        id: toolCallId !== undefined && toolCallId !== '' ? toolCallId : runId,
        name,
        arguments: toolArguments(input),
      };
      const description = toolDescriptionOf(this.#bus, name);
      if (description !== undefined) call.description = description;
      const turnId = parent?.turnId ?? '';
      if (turnId !== '') call.turnId = turnId;
      const parentCall = parent?.kind === 'tool' ? parent.call : undefined;
      if (parentCall !== undefined) call.parentCallId = parentCall.id;
      const bus = this.#bus;
      let runner: ScopeRunner | undefined;
      const invoke = runAsInvokeHandler(
        bus,
        call,
        this.#source,
        (event) => {
          // Where the tool's span is active: traceLangChainTools runs the tool's code here.
          runner = captureContext();
          return event;
        },
        this.#causation(parent, parent?.anchor),
      );
      if (runner !== undefined) holdToolScope(bus, runId, runner);
      this.#add(runId, {
        ...scopeOf(parent, runId),
        kind: 'tool',
        anchor: { id: invoke.id, sequence: invoke.causation.sequence },
        call: { id: call.id, name: call.name },
        toolRunId: runId,
        streamSequence: 0,
      });
    });
  }

  /** A chunk a generator tool yielded: `tool.stream.partial`. */
  override handleToolEvent(chunk: unknown, runId: string): void {
    this.#contain(() => {
      const run = this.#known(runId, 'tool');
      if (run?.call === undefined) return;
      const partial: ToolStreamPartial = {
        tool_name: run.call.name,
        tool_id: run.call.id,
        turn_id: run.turnId,
        sequence: ++run.streamSequence,
        payload: chunk,
      };
      run.streamOptions ??= this.#options(run, run.anchor);
      emitQuiet(this.#bus, TOOL_STREAM_PARTIAL, partial, run.streamOptions);
    });
  }

  /**
   * A custom event dispatched inside run `runId` (LangChain passes no parent run id here): inside
   * a tool run (from the tool or a chain it called) `tool.stream.progress` on the tool's stream
   * when its data has a numeric `progress` from 0 to 1, else an event named after it on the span
   * of the run's nearest turn, sub-agent or tool.
   */
  override handleCustomEvent(eventName: string, data: unknown, runId: string): void {
    this.#contain(() => {
      const run = this.#runs.get(runId);
      if (run === undefined) {
        this.#unknownRuns += 1;
        return;
      }
      const progress = progressOf(data);
      // The run itself, or the tool a chain (a lambda, a sequence) the tool called runs inside.
      const tool = this.#runs.get(run.toolRunId);
      if (tool?.kind === 'tool' && tool.call !== undefined && progress !== undefined) {
        const event: ToolStreamProgress = {
          tool_name: tool.call.name,
          tool_id: tool.call.id,
          turn_id: tool.turnId,
          sequence: ++tool.streamSequence,
          progress,
          payload: data,
        };
        tool.streamOptions ??= this.#options(tool, tool.anchor);
        emitQuiet(this.#bus, TOOL_STREAM_PROGRESS, event, tool.streamOptions);
        return;
      }
      this.#emit(customEventType(eventName), data, run, run.anchor);
    });
  }

  /** A tool run ended: `tool.result` (a `ToolMessage` of status `error` a failure). */
  override handleToolEnd(output: unknown, runId: string): void {
    this.#contain(() => {
      const run = this.#take(runId, 'tool');
      if (run?.call === undefined) return;
      const end = toolEnd(output);
      const result: ToolResult = { id: run.call.id, name: run.call.name, output: end.output };
      if (end.error !== undefined) {
        result.error = end.error;
        result.errorType = 'tool_error';
      }
      this.#finishTool(run, result);
    });
  }

  /** A tool run failed: a failed `tool.result`, `error.type` the error's name (`AbortError`: cancelled). */
  override handleToolError(error: Error, runId: string): void {
    this.#contain(() => {
      const run = this.#take(runId, 'tool');
      if (run?.call === undefined) return;
      const result: ToolResult = {
        id: run.call.id,
        name: run.call.name,
        output: '',
        error: messageOf(error),
      };
      if (error instanceof Error && error.name === 'AbortError') result.cancelled = true;
      else if (error instanceof Error && error.name !== '') result.errorType = error.name;
      this.#finishTool(run, result);
    });
  }

  #startTurn(runId: string, name: string, sessionId: string | undefined, rootId: string): void {
    const turn: TurnInfo = { turnId: runId };
    if (sessionId !== undefined) turn.sessionId = sessionId;
    const scope = { sessionId, agentId: name, depth: undefined };
    const event = this.#bus.emit(AGENT_TURN_START, turn, {
      source: this.#source,
      causation: causationOf(scope, undefined),
    });
    this.#add(runId, {
      kind: 'turn',
      rootId,
      anchor: { id: event.id, sequence: event.causation.sequence },
      turnId: runId,
      ...scope,
      streamSequence: 0,
    });
  }

  #startSubagent(runId: string, name: string, parent: Run): void {
    const spawn: SubagentSpawn = { spawnId: runId, name };
    if (parent.turnId !== '') spawn.parentTurnId = parent.turnId;
    const event = this.#emit(SUBAGENT_SPAWN, spawn, parent, parent.anchor);
    this.#add(runId, {
      kind: 'subagent',
      rootId: parent.rootId,
      anchor: { id: event.id, sequence: event.causation.sequence },
      // The sub-agent's own model calls and tools belong to no turn of the outer agent.
      turnId: '',
      sessionId: parent.sessionId,
      agentId: name,
      depth: (parent.depth ?? 0) + 1,
      streamSequence: 0,
    });
  }

  #startModel(
    llm: Serialized,
    runId: string,
    parentRunId: string | undefined,
    extraParams: Record<string, unknown> | undefined,
    metadata: Record<string, unknown> | undefined,
    runName: string | undefined,
  ): void {
    if (this.#isDuplicate(runId)) return;
    const parent = this.#runs.get(parentRunId);
    const model = requestedModel(llm, extraParams, metadata, runName);
    const request: LlmRequest = { requestId: runId };
    if (model !== '') request.model = model;
    const turnId = parent?.turnId ?? '';
    if (turnId !== '') request.turnId = turnId;
    const tools = declaredTools(extraParams);
    if (tools !== undefined) request.tools = tools;
    const event = this.#emit(LLM_REQUEST, request, parent, parent?.anchor);
    this.#add(runId, {
      ...scopeOf(parent, runId),
      kind: 'chat',
      // The response is caused by the request (it ends the request's span).
      anchor: { id: event.id, sequence: event.causation.sequence },
      model,
      streamSequence: 0,
    });
  }

  #endChain(runId: string, error: unknown): void {
    const run = this.#runs.take(runId);
    if (run === undefined) {
      this.#unknownRuns += 1;
      return;
    }
    if (run.kind === 'turn') {
      const turn: TurnInfo = { turnId: run.turnId };
      if (run.sessionId !== undefined) turn.sessionId = run.sessionId;
      this.#emit(AGENT_TURN_END, turn, run, run.anchor);
    } else if (run.kind === 'subagent') {
      const complete: SubagentComplete = { spawnId: runId };
      if (error !== undefined) complete.error = messageOf(error);
      this.#emit(SUBAGENT_COMPLETE, complete, run, run.anchor);
    }
    // The tree is over: runs of it whose end never came are forgotten (their spans, if any,
    // are the tracer's to end, marked abandoned).
    if (run.rootId === runId) {
      for (const toolRunId of this.#runs.forgetTree(runId)) releaseToolScope(this.#bus, toolRunId);
    }
  }

  #finishTool(run: Run, result: ToolResult): void {
    const turnId = run.turnId;
    if (turnId !== '') result.turnId = turnId;
    const options = this.#options(run, run.anchor);
    const veto = emitVetoableQuiet(this.#bus, BEFORE_TOOL_RESULT, result, options);
    if (!veto.vetoed) this.#bus.emit(TOOL_RESULT, result, options);
  }

  #emit<T>(type: string, payload: T, run: Run | undefined, anchor: Anchor | undefined) {
    return this.#bus.emit(type, payload, this.#options(run, anchor));
  }

  #options(run: Run | undefined, anchor: Anchor | undefined): EmitOptions {
    return { source: this.#source, causation: this.#causation(run, anchor) };
  }

  #causation(run: Run | undefined, anchor: Anchor | undefined): Partial<Causation> {
    return causationOf(run, anchor);
  }

  #add(runId: string, run: Run): void {
    const forgotten = this.#runs.add(runId, run);
    if (forgotten?.[1].kind === 'tool') releaseToolScope(this.#bus, forgotten[0]);
  }

  #isDuplicate(runId: string): boolean {
    if (!this.#runs.has(runId)) return false;
    this.#duplicateRuns += 1;
    return true;
  }

  /** The open run `runId` if it is of `kind`; counts it as unknown otherwise. */
  #known(runId: string, kind: SpanKind): Run | undefined {
    const run = this.#runs.get(runId);
    if (run?.kind === kind) return run;
    this.#unknownRuns += 1;
    return undefined;
  }

  /** Removes and returns the open run `runId` if it is of `kind`. */
  #take(runId: string, kind: SpanKind): Run | undefined {
    const run = this.#known(runId, kind);
    if (run === undefined) return undefined;
    this.#runs.take(runId);
    if (kind === 'tool') releaseToolScope(this.#bus, runId);
    return run;
  }

  #contain(work: () => void): void {
    try {
      work();
    } catch {
      // Telemetry never breaks the agent: the failure is counted in stats().errors.
      this.#errors += 1;
    }
  }
}

/** The causation scope (session, agent, depth) a run passes on, without a kind or an anchor. */
type Scope = Pick<Run, 'rootId' | 'turnId' | 'sessionId' | 'agentId' | 'depth'>;

function scopeOf(parent: Run | undefined, runId: string): Scope {
  return parent === undefined
    ? { rootId: runId, turnId: '', sessionId: undefined, agentId: undefined, depth: undefined }
    : {
        rootId: parent.rootId,
        turnId: parent.turnId,
        sessionId: parent.sessionId,
        agentId: parent.agentId,
        depth: parent.depth,
      };
}

/** A plain chain at the root (no graph): its runs hang on nothing of tooltrace's. */
function rootChain(runId: string): Run {
  return { ...scopeOf(undefined, runId), kind: 'chain', anchor: undefined, streamSequence: 0 };
}

/**
 * A plain chain (a graph node, a sequence, a lambda) inside a run: its children hang where it
 * hangs, and inside a tool its custom events are the tool's.
 */
function passOn(parent: Run): Run {
  const chain: Run = {
    ...scopeOf(parent, parent.rootId),
    kind: 'chain',
    anchor: parent.anchor,
    streamSequence: 0,
  };
  return parent.toolRunId === undefined ? chain : { ...chain, toolRunId: parent.toolRunId };
}

function causationOf(
  scope: Pick<Run, 'sessionId' | 'agentId' | 'depth'> | undefined,
  anchor: Anchor | undefined,
): Partial<Causation> {
  const causation: Partial<Causation> = {};
  if (anchor !== undefined) {
    causation.parentId = anchor.id;
    causation.parentSeq = anchor.sequence;
  }
  if (scope?.sessionId !== undefined) causation.sessionId = scope.sessionId;
  if (scope?.agentId !== undefined) causation.agentId = scope.agentId;
  if (scope?.depth !== undefined) causation.depth = scope.depth;
  return causation;
}
