import { randomBytes } from 'node:crypto';
import type { ToolContext, ToolInputRequest, ToolInputResponse } from '../streamtool/index.js';
import {
  answeredEvent,
  checkCapability,
  checkRequest,
  isAnswerTo,
  requestedEvent,
} from './input-round.js';
import { McpInputError } from './mcp-input-error.js';
import type { McpCallToolResult } from './mcp-tool-server.js';
import { ProgressNotifier } from './progress-notifier.js';
import { sealState } from './request-state-seal.js';
import type { ServedRequest } from './served-request.js';
import type { ServedCall, StreamListener } from './served-tool.js';
import type { ToolInputMethod } from '../streamtool/tool-context.js';
import { toolOutput } from '../streamtool/tool-output.js';

/** A stream event as a task's status message: `50% step 2` (the percent when known). */
export function statusNote(fraction: number, payload: unknown): string {
  const note = payload === undefined ? '' : toolOutput(payload);
  const percent = fraction >= 0 ? `${Math.round(fraction * 100)}%` : '';
  return [percent, note].filter((part) => part !== '').join(' ');
}

/** What a served `tools/call` that may ask for input answers: a result, or a question. */
export type ServedAnswer = McpCallToolResult | InputRequiredResult;

/** MCP 2026-07-28's `InputRequiredResult`. */
export interface InputRequiredResult {
  resultType: 'input_required';
  inputRequests: Record<string, { method: string; params: Record<string, unknown> }>;
  requestState: string;
  [key: string]: unknown;
}

/** How long and how many served calls may wait for a client's answer. */
export interface WaitingLimits {
  /** Milliseconds a call waits for the client to come back with answers. */
  timeout: number;
  /** Calls waiting at once in this process; past it the oldest is ended. */
  maxWaiting: number;
}

interface Question {
  readonly method: ToolInputMethod;
  readonly params: Record<string, unknown>;
  resolve(response: ToolInputResponse): void;
  reject(error: unknown): void;
}

/** The calls waiting for a client's answers, by handle: shared by every server of the process. */
const waiting = new Map<string, ServedInputCall>();

/** The waiting call `handle` names, when it still waits. */
export function waitingCall(handle: string): ServedInputCall | undefined {
  return waiting.get(handle);
}

/**
 * One served call of a tool that may ask for input over MCP 2026-07-28: the tool runs once, and
 * its call (one span) lives across the requests that carry it. A request is answered with the
 * tool's result, or — when the tool asked — with an `input_required` result naming the questions
 * and a sealed `requestState`; the client's next request with the answers and that state finds
 * the waiting call again (in this process: the state names it) and the tool goes on where it
 * waited. Questions asked together travel in one round; answers given up front in the first
 * request are taken without a round; a missing or malformed answer is asked again. A call no
 * request comes back for within `timeout` is ended as cancelled.
 */
export class ServedInputCall {
  readonly handle = randomBytes(12).toString('base64url');
  readonly toolName: string;
  readonly context: ToolContext;
  #served: ServedCall | undefined;
  readonly #controller: AbortController;
  readonly #limits: WaitingLimits;
  readonly #questions = new Map<string, Question>();
  readonly #upFront: Readonly<Record<string, unknown>>;
  readonly #used = new Set<string>();
  #capabilities: Readonly<Record<string, unknown>> | undefined;
  #rounds = 0;
  #keys = 0;
  #wanted = false;
  #flushScheduled = false;
  #wake: (() => void) | undefined;
  #attached: { request: ServedRequest; notifier: ProgressNotifier; unlink: () => void } | undefined;
  #timer: NodeJS.Timeout | undefined;
  readonly #taskFirst: boolean;
  #streamed = false;
  #wakeTask: (() => void) | undefined;
  #delegate: ((request: ToolInputRequest) => Promise<ToolInputResponse>) | undefined;
  /** The tool's last progress note or partial, as a task's `statusMessage` (task-first calls). */
  lastNote: string | undefined;

  constructor(
    toolName: string,
    first: ServedRequest,
    controller: AbortController,
    limits: WaitingLimits,
    taskFirst = false,
  ) {
    this.#taskFirst = taskFirst;
    this.toolName = toolName;
    this.#controller = controller;
    this.#limits = limits;
    this.#upFront = first.inputResponses ?? {};
    this.#capabilities = first.clientCapabilities;
    const capabilities = (): Readonly<Record<string, unknown>> | undefined => this.#capabilities;
    this.context = {
      requestInput: (request) => this.#ask(request),
      get clientCapabilities() {
        return capabilities();
      },
    };
  }

  /** Binds the running call (its relay hears the stream; it is started with {@link context}). */
  bind(served: ServedCall): void {
    this.#served = served;
    served.relay.listen(this.#taskFirst ? this.#taskTrigger() : this.#forwarder());
  }

  /** The call's controller: its abort ends the tool (a task made of the call aborts it too). */
  get controller(): AbortController {
    return this.#controller;
  }

  /**
   * Hands the call's questions over to `ask` (a task made of the call asks through `tasks/get`
   * from now on); a question asked meanwhile goes there too.
   */
  handOver(ask: (request: ToolInputRequest) => Promise<ToolInputResponse>): void {
    this.#delegate = ask;
    for (const [key, question] of [...this.#questions]) {
      this.#questions.delete(key);
      ask({ key, method: question.method, params: question.params }).then(
        (response) => question.resolve(response),
        (error: unknown) => question.reject(error),
      );
    }
  }

  /** The running call, once bound. */
  get served(): ServedCall | undefined {
    return this.#served;
  }

  /** The round a sealed state must name to answer this call now. */
  get round(): number {
    return this.#rounds;
  }

  /** Whether a request is being answered now (a second one with the same state is refused). */
  get attached(): boolean {
    return this.#attached !== undefined;
  }

  /**
   * Answers one request of the call — the first, or one that came back with answers — with the
   * tool's result once it ends, or with the next questions once it asks.
   */
  async answer(request: ServedRequest, retry: boolean): Promise<ServedAnswer | 'task'> {
    const served = this.#served;
    if (served === undefined) throw new TypeError('ServedInputCall.answer() before bind()');
    this.#attach(request);
    // Armed before the answers resume the tool, so its next question (asked at once) comes first.
    const taskMoment = this.#taskFirst ? this.#taskMoment() : undefined;
    if (retry) this.#deliver(request.inputResponses ?? {});
    try {
      const outcome = await Promise.race(
        taskMoment === undefined
          ? [served.result, this.#inputWanted()]
          : [served.result, this.#inputWanted(), taskMoment],
      );
      if (outcome === 'task' || (this.#taskFirst && outcome !== 'input')) return 'task';
      if (outcome !== 'input') return outcome;
      return this.#question();
    } finally {
      this.#detach();
    }
  }

  #attach(request: ServedRequest): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    waiting.delete(this.handle);
    if (request.clientCapabilities !== undefined) this.#capabilities = request.clientCapabilities;
    const onAbort = (): void => this.#controller.abort(request.signal.reason);
    if (request.signal.aborted) onAbort();
    else request.signal.addEventListener('abort', onAbort, { once: true });
    this.#attached = {
      request,
      notifier: new ProgressNotifier(request),
      unlink: () => request.signal.removeEventListener('abort', onAbort),
    };
  }

  #detach(): void {
    this.#attached?.unlink();
    this.#attached = undefined;
  }

  /** The `input_required` result for the questions asked; the call waits for the client. */
  #question(): InputRequiredResult {
    this.#wanted = false;
    this.#rounds += 1;
    const inputRequests: InputRequiredResult['inputRequests'] = {};
    for (const [key, question] of this.#questions) {
      inputRequests[key] = { method: question.method, params: question.params };
    }
    this.#wait();
    const requestState = sealState(
      { call: this.handle, round: this.#rounds, tool: this.toolName },
      this.#limits.timeout,
    );
    return { resultType: 'input_required', inputRequests, requestState };
  }

  /** Keeps the call for the client's answers, for `timeout` at most. */
  #wait(): void {
    waiting.set(this.handle, this);
    if (waiting.size > this.#limits.maxWaiting) {
      const [oldest] = waiting.values();
      if (oldest !== undefined)
        oldest.#end(`it was the oldest of more than ${this.#limits.maxWaiting} calls waiting`);
    }
    this.#timer = setTimeout(
      () => this.#end(`no answer came within ${this.#limits.timeout} ms`),
      this.#limits.timeout,
    );
    this.#timer.unref();
  }

  /** Ends a call whose answers never came: its questions fail, the tool is aborted. */
  #end(why: string): void {
    waiting.delete(this.handle);
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    const error = new McpInputError(
      'not-answered',
      `MCP tool "${this.toolName}" asked for input and the client did not answer: ${why}`,
    );
    this.#controller.abort(error);
  }

  /** The answers a request brought, each to the question waiting under its key. */
  #deliver(responses: Readonly<Record<string, unknown>>): void {
    this.#wanted = false;
    for (const [key, question] of [...this.#questions]) {
      const response = responses[key];
      if (!isAnswerTo(question.method, response)) continue;
      this.#questions.delete(key);
      this.#emit(answeredEvent(key, question.method, response, this.#rounds));
      question.resolve(response);
    }
    // Questions left unanswered are asked again.
    if (this.#questions.size > 0) this.#scheduleWanted();
  }

  async #ask(request: ToolInputRequest): Promise<ToolInputResponse> {
    if (this.#delegate !== undefined) return this.#delegate(request);
    const signal = this.#controller.signal;
    signal.throwIfAborted();
    checkRequest(this.toolName, request);
    checkCapability(this.toolName, request.method, this.#capabilities);
    const key = request.key ?? `input_${++this.#keys}`;
    if (this.#used.has(key)) {
      throw new McpInputError(
        'invalid-request',
        `MCP tool "${this.toolName}" asked twice under the key "${key}"`,
      );
    }
    this.#used.add(key);
    const params = request.params ?? {};
    this.#emit(requestedEvent(key, request, this.#rounds));
    const upFront = this.#upFront[key];
    if (isAnswerTo(request.method, upFront)) {
      this.#emit(answeredEvent(key, request.method, upFront, this.#rounds));
      return upFront;
    }
    return new Promise<ToolInputResponse>((resolve, reject) => {
      const onAbort = (): void => {
        this.#questions.delete(key);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#questions.set(key, {
        method: request.method,
        params,
        resolve: (response) => {
          signal.removeEventListener('abort', onAbort);
          resolve(response);
        },
        reject,
      });
      this.#scheduleWanted();
    });
  }

  /** After this turn (so questions asked together go in one round), tells the request to ask. */
  #scheduleWanted(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      if (this.#questions.size === 0) return;
      this.#wanted = true;
      this.#wake?.();
    });
  }

  #inputWanted(): Promise<'input'> {
    if (this.#wanted) return Promise.resolve('input');
    return new Promise((resolve) => {
      this.#wake = () => {
        this.#wake = undefined;
        resolve('input');
      };
    });
  }

  #emit(event: Parameters<ServedCall['relay']['inputEvent']>[0]): void {
    this.#served?.relay.inputEvent(event);
  }

  /**
   * When a task-first call becomes a task: at its first stream event, or once the tool went a
   * turn of the event loop (two `setImmediate`s: questions asked at once are flushed in one)
   * without asking. A tool that asks as its first act is asked in `input_required` rounds.
   */
  #taskMoment(): Promise<'task'> {
    return new Promise((resolve) => {
      if (this.#streamed) {
        resolve('task');
        return;
      }
      this.#wakeTask = () => resolve('task');
      setImmediate(() => setImmediate(() => resolve('task')));
    });
  }

  /** Watches a task-first call's stream: its first event makes the task. */
  #taskTrigger(): StreamListener {
    const heard = (note: string): Promise<void> => {
      if (note !== '') this.lastNote = note;
      this.#streamed = true;
      this.#wakeTask?.();
      return Promise.resolve();
    };
    return {
      progress: (fraction, payload) => heard(statusNote(fraction, payload)),
      partial: (payload) => heard(statusNote(-1, payload)),
    };
  }

  /** The stream as progress notifications to whichever request is being answered now. */
  #forwarder(): StreamListener {
    return {
      progress: (fraction, payload) =>
        this.#attached?.notifier.progress(fraction, payload) ?? Promise.resolve(),
      partial: (payload) => this.#attached?.notifier.partial(payload) ?? Promise.resolve(),
    };
  }
}
