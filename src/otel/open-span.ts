import type { Attributes, HrTime, Span, SpanContext } from '@opentelemetry/api';
import type { ScopeRunner } from '../bus/index.js';
import type { AttributeTarget } from './attribute-target.js';
import { BusEventBudget } from './bus-event-budget.js';
import { hrTimeNear } from './hr-time.js';
import { spanRunner } from './span-runner.js';

/**
 * An open span of either kind (a tool call, an agent span) as the span core sees it: its SDK
 * span and where it hangs, its time line (start, latest event, latest activity), the other bus
 * events it carries (bounded), the scope its handlers run in, and whether it ended. Its state
 * changes only through its methods; it ends once, through the core's end path
 * ({@link SpanCore.end}), which asks {@link OpenSpan.claimEnd} first.
 */
export abstract class OpenSpan {
  readonly span: Span;
  readonly spanContext: SpanContext;
  /** Span id of its parent span, `''` for a root: whose open child it is. */
  readonly parentSpanId: string;
  readonly startUnixNano: bigint;
  /** Id of the event that started the span, `''` when it has none: what causal walks find. */
  abstract readonly startEventId: string;
  readonly #startHrTime: HrTime;
  #lastUnixNano: bigint;
  #lastActivity: number;
  #ended = false;
  #errorType = '';
  /** Made on the span's first other bus event: most spans never get one. */
  #busEvents: BusEventBudget | undefined;
  #runner: ScopeRunner | undefined;

  /**
   * @param startHrTime `startUnixNano` as the span was started with it (the SDK may keep this
   * very array: read only).
   */
  constructor(
    span: Span,
    parentSpanId: string,
    startUnixNano: bigint,
    startHrTime: HrTime,
    now: number,
  ) {
    this.span = span;
    this.spanContext = span.spanContext();
    this.parentSpanId = parentSpanId;
    this.startUnixNano = startUnixNano;
    this.#startHrTime = startHrTime;
    this.#lastUnixNano = startUnixNano;
    this.#lastActivity = now;
  }

  /** Time of the latest event seen in the span: where a span ended without its end event ends. */
  get lastUnixNano(): bigint {
    return this.#lastUnixNano;
  }

  /** Subscriber clock (ms) of its latest activity, for the idle timeout. */
  get lastActivity(): number {
    return this.#lastActivity;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** `error.type` the span ends with, `''` for success; its outcome sets it. */
  get errorType(): string {
    return this.#errorType;
  }

  /** Records the `error.type` the span ends with. */
  fail(errorType: string): void {
    this.#errorType = errorType;
  }

  /**
   * Marks the span ended and returns `true`, the first time only: whoever gets `true` runs the
   * end path, so a span is ended, and taken out of every index, exactly once.
   */
  claimEnd(): boolean {
    if (this.#ended) return false;
    this.#ended = true;
    return true;
  }

  /** The OpenTelemetry time of a bus timestamp of this span. */
  hrTime(unixNano: bigint): HrTime {
    return hrTimeNear(this.startUnixNano, this.#startHrTime, unixNano);
  }

  /** Notes activity in the span: an event at `unixNano`, seen at subscriber clock `now`. */
  touch(unixNano: bigint, now: number): void {
    if (unixNano > this.#lastUnixNano) this.#lastUnixNano = unixNano;
    this.#lastActivity = now;
  }

  /**
   * Adds a span event for another bus event the span holds (a `plan.update`, an `io.output`),
   * unless `max` are kept already; `false` when it was only counted. The event is the span's
   * latest one too, kept or not (without counting as activity): a span ended without its end
   * event ends there, and a model call inferred later starts there (after a `plan.result`, not
   * at the start of the turn that planned).
   */
  addBusEvent(name: string, attributes: Attributes, unixNano: bigint, max: number): boolean {
    if (unixNano > this.#lastUnixNano) this.#lastUnixNano = unixNano;
    this.#busEvents ??= new BusEventBudget();
    return this.#busEvents.add(this.span, name, attributes, this.hrTime(unixNano), max);
  }

  /** Writes how many other bus events became span events or were only counted, when any came. */
  protected summarizeBusEvents(target: AttributeTarget): void {
    this.#busEvents?.summarize(target);
  }

  /** Runs handler code with this span active, so spans it starts are its children. */
  get runner(): ScopeRunner {
    return (this.#runner ??= spanRunner(this.span));
  }
}
