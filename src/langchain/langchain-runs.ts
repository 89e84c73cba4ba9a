import type { EmitOptions } from '../bus/index.js';
import type { ToolCall } from '../events/index.js';

/** What a LangChain run is to the bus. */
export type RunKind = 'chain' | 'turn' | 'subagent' | 'chat' | 'tool';

/** A bus event a run's children are caused by: its id and bus sequence. */
export interface Anchor {
  readonly id: string;
  readonly sequence: number;
}

/**
 * One LangChain run the handler has seen start and not yet end. Runs that become spans (a graph
 * run, a tool run, a sub-graph) anchor their children at their start event; plain chains (graph
 * nodes, sequences, lambdas) pass their parent's anchor and scope on, so a tool two chains deep
 * in a graph is still a child of the graph's turn.
 */
export interface Run {
  readonly kind: RunKind;
  /** The root run of its tree: every run of a tree is forgotten when the root ends. */
  readonly rootId: string;
  /** Where events this run and its children emit hang, `undefined` for a parentless root. */
  readonly anchor: Anchor | undefined;
  /** The turn (the root graph run's id) its events name, `''` outside a graph. */
  readonly turnId: string;
  readonly sessionId: string | undefined;
  readonly agentId: string | undefined;
  readonly depth: number | undefined;
  /** A tool run's call id and name (its arguments are not kept: runs may stay a long time). */
  readonly call?: Pick<ToolCall, 'id' | 'name'>;
  /**
   * The tool run whose span this run's events hang on: its own id for a tool run, the tool's for
   * a chain inside one, so progress dispatched from a lambda the tool calls is the tool's.
   */
  readonly toolRunId?: string;
  /** A chat run's model, as its request named it. */
  readonly model?: string;
  /** Stream events a tool run emitted so far (their sequence numbers). */
  streamSequence: number;
  /** How a tool run's stream events are emitted (source, causation), made on the first one. */
  streamOptions?: EmitOptions;
}

/**
 * The runs in flight, by run id, bounded: past `maxOpenRuns` the oldest is forgotten (counted),
 * so runs whose end never comes cannot grow memory without bound. A run still open when its
 * tree's root ends is forgotten with it (counted as abandoned). Their spans, if any, are ended
 * by the tracer's idle sweep.
 */
export class LangChainRuns {
  readonly #runs = new Map<string, Run>();
  readonly #max: number;
  #evicted = 0;
  #abandoned = 0;

  constructor(maxOpenRuns: number) {
    this.#max = maxOpenRuns;
  }

  get size(): number {
    return this.#runs.size;
  }

  /** Runs forgotten because more than `maxOpenRuns` were open. */
  get evicted(): number {
    return this.#evicted;
  }

  /** Runs forgotten because the root of their tree ended before they did. */
  get abandoned(): number {
    return this.#abandoned;
  }

  has(runId: string): boolean {
    return this.#runs.has(runId);
  }

  get(runId: string | undefined): Run | undefined {
    return runId === undefined ? undefined : this.#runs.get(runId);
  }

  /** Adds a run; returns the run forgotten to make room, if one was. */
  add(runId: string, run: Run): [string, Run] | undefined {
    let forgotten: [string, Run] | undefined;
    if (this.#runs.size >= this.#max) {
      const oldest = this.#runs.entries().next().value;
      if (oldest !== undefined) {
        this.#runs.delete(oldest[0]);
        this.#evicted += 1;
        forgotten = oldest;
      }
    }
    this.#runs.set(runId, run);
    return forgotten;
  }

  /** Removes and returns a run. */
  take(runId: string): Run | undefined {
    const run = this.#runs.get(runId);
    if (run !== undefined) this.#runs.delete(runId);
    return run;
  }

  /**
   * Removes every run of the tree rooted at `rootId` (the root itself already taken), counting
   * each as abandoned; returns those that were tool runs.
   */
  forgetTree(rootId: string): string[] {
    const tools: string[] = [];
    for (const [runId, run] of this.#runs) {
      if (run.rootId !== rootId) continue;
      this.#runs.delete(runId);
      this.#abandoned += 1;
      if (run.kind === 'tool') tools.push(runId);
    }
    return tools;
  }
}
