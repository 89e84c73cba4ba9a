import type { Refusal } from './http-answer.js';

/** Distinct (client, status) lines logged at most; past it refusals are only counted. */
const MAX_LOGGED = 1000;

/** Who a refused request came from: its client's name, `''` for no client, `undefined` when its token named none. */
export interface RefusedRequest {
  method: string;
  path: string;
  remoteAddress: string;
  client: string | undefined;
}

/**
 * Logs the first refused request of each client and reason (status), one line: a forwarder with a wrong
 * token or a wrong path otherwise goes unnoticed on the sidecar's side, where the count in
 * `/metrics` is all there is. A client without a valid token is told apart by its address, so a
 * neighbour's wrong token shows even when another's was logged already. The set of lines
 * logged is bounded: a flood of addresses cannot grow it.
 */
export class RefusalLog {
  readonly #log: (line: string) => void;
  readonly #logged = new Set<string>();

  constructor(log: (line: string) => void) {
    this.#log = log;
  }

  /** Notes a refusal; logs it when its client and reason are new. */
  refused(request: RefusedRequest, refusal: Refusal): void {
    const who =
      request.client === undefined
        ? `${request.remoteAddress} (no valid token)`
        : request.client === ''
          ? request.remoteAddress
          : `${request.remoteAddress} (client ${request.client})`;
    // By status, not message: a scanner's 404s name a new path each, and would each be logged.
    const key = `${request.client ?? `\u0000${request.remoteAddress}`}\u0000${refusal.status}`;
    if (this.#logged.has(key) || this.#logged.size >= MAX_LOGGED) return;
    this.#logged.add(key);
    this.#log(
      `tooltrace sidecar: refused ${request.method} ${request.path} from ${who}: ${refusal.status} ${refusal.message}; further refusals like it are only counted (tooltrace_http_refused_total)`,
    );
  }
}
