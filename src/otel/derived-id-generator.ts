import { randomFillSync } from 'node:crypto';
import { derivedSpanId, derivedTraceId } from './span-keys.js';

const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let poolOffset = POOL_BYTES;

function randomHex(bytes: number): string {
  for (;;) {
    if (poolOffset + bytes > POOL_BYTES) {
      randomFillSync(pool);
      poolOffset = 0;
    }
    const hex = pool.toString('hex', poolOffset, poolOffset + bytes);
    poolOffset += bytes;
    // An all-zero id is invalid; with 64 random bits this loops once in 2^64 draws.
    if (!/^0+$/.test(hex)) return hex;
  }
}

/**
 * An OpenTelemetry id generator (the SDK's `IdGenerator` shape: `generateTraceId()` and
 * `generateSpanId()`) that hands out ids derived from bus events. Give the same instance to the
 * provider (`new BasicTracerProvider({ idGenerator })`) and to `traceReplay` (its `idGenerator`
 * option; `traceToolCalls` takes no replay controls): right before
 * starting a tool span, the subscriber queues the ids it wants — the span id from the
 * `tool.invoke` event id (or the tool call id), the trace id from the causal root, session or
 * call — and the provider's next `generate…` call takes them. Anything else the provider starts
 * gets random ids. Replaying the same events therefore gives the same ids, which lets a
 * restarted sidecar re-export spans as identical duplicates instead of new ones. Ids are
 * MurmurHash3-based: stable and well spread, not secret.
 */
export class DerivedIdGenerator {
  #nextTraceId: string | undefined;
  #nextSpanId: string | undefined;

  /** The next trace id: the queued one, else a random one. */
  generateTraceId(): string {
    const queued = this.#nextTraceId;
    if (queued === undefined) return randomHex(16);
    this.#nextTraceId = undefined;
    return queued;
  }

  /** The next span id: the queued one, else a random one. */
  generateSpanId(): string {
    const queued = this.#nextSpanId;
    if (queued === undefined) return randomHex(8);
    this.#nextSpanId = undefined;
    return queued;
  }

  /** The 32-hex-character trace id derived from `key`. */
  traceIdFor(key: string): string {
    return derivedTraceId(key);
  }

  /** The 16-hex-character span id derived from `key`. */
  spanIdFor(key: string): string {
    return derivedSpanId(key);
  }

  /**
   * Queues the ids the next span start takes. The SDK draws the span id first and a trace id
   * only for a span without a parent; call {@link DerivedIdGenerator.clearQueue} right after
   * starting the span so an unused trace id never leaks into an unrelated span.
   */
  queue(traceId: string | undefined, spanId: string): void {
    this.#nextTraceId = traceId;
    this.#nextSpanId = spanId;
  }

  /** Forgets queued ids that were not taken. */
  clearQueue(): void {
    this.#nextTraceId = undefined;
    this.#nextSpanId = undefined;
  }
}
