import type { IntakeOutcome } from '../pipeline/index.js';
import type { ClientTokens } from './client-tokens.js';
import type { RefusalLog } from './refusal-log.js';

/** What the HTTP intake counts, for `/metrics` ({@link SidecarMetrics} implements it). */
export interface HttpIntakeMetrics {
  /** A request answered with `status` (401, 404, 405, 408, 413, 415, 429, 503, …). */
  httpRefused(status: number): void;
  /** A connection opened (`1`) or closed (`-1`). */
  httpConnections(delta: 1 | -1): void;
  /** Request body bytes taken (positive) or given back (negative). */
  httpInflightBytes(delta: number): void;
  /** A connection closed to make room (`evicted`) or refused because all were busy. */
  httpConnectionDropped(reason: 'evicted' | 'turned_away'): void;
}

/**
 * The limits of `POST /v1/events` (`--max-body-bytes`, `--max-connections`, `--header-timeout`,
 * `--body-timeout`, `--max-inflight-bytes`), stated once for the sidecar's options, its intake
 * room and each listener.
 */
export interface HttpIntakeLimits {
  /**
   * Largest request body, compressed or not, in bytes; larger ones get 413.
   * @default 16777216 (16 MiB)
   */
  maxBodyBytes?: number;
  /**
   * Open connections at most. At the limit the oldest idle one is closed to make room; only
   * when all are busy is a new one turned away.
   * @default 256
   */
  maxConnections?: number;
  /**
   * Time a connection has to send a request's headers (from connecting, or from its last
   * answer); slower ones are cut off.
   * @default 10000
   */
  headersTimeoutMs?: number;
  /** Time a request has to send its whole body once its headers arrived; then 408 and cut off. @default 30000 */
  bodyTimeoutMs?: number;
  /**
   * Body bytes held at once across all requests (being received, inflated or replayed); a
   * request that would go beyond gets 429 once its body was read.
   * @default 67108864 (64 MiB)
   */
  maxInflightBytes?: number;
}

/** Options for {@link HttpIntake.start}. */
export interface HttpIntakeOptions extends HttpIntakeLimits {
  host: string;
  /** `0` picks a free port. */
  port: number;
  /**
   * The bearer tokens `POST /v1/events` accepts, each naming a client; when none is required,
   * anyone may send (loopback only) and events belong to no client.
   */
  tokens: ClientTokens;
  /**
   * Whether `/metrics` needs a token too (listening beyond loopback); `/healthz` and `/readyz`
   * never do.
   * @default false
   */
  protectMetrics?: boolean;
  /** Decodes and replays an NDJSON body sent by `client` (`''` without tokens). */
  ingest: (body: readonly Buffer[], client: string) => Promise<IntakeOutcome>;
  /** While true, `POST /v1/events` answers 429 with `Retry-After` and `/readyz` 503. */
  isFull: () => boolean;
  /** Whether the sidecar is ready to take events (for `/readyz`). */
  isReady: () => boolean;
  /** Prometheus text for `/metrics`. */
  renderMetrics: () => string;
  /** Where refusals and connections are counted. @default nowhere */
  metrics?: HttpIntakeMetrics;
  /** Where the first refusal of each client and reason is logged. @default nowhere */
  refusals?: RefusalLog;
  /**
   * Seconds a client is told to wait when the queue is full.
   * @default 1
   */
  retryAfterSeconds?: number;
}

/** The defaults of {@link HttpIntakeOptions}' limits. */
export const HTTP_INTAKE_DEFAULTS = {
  maxBodyBytes: 16 * 1024 * 1024,
  maxConnections: 256,
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
  maxInflightBytes: 64 * 1024 * 1024,
} as const;
