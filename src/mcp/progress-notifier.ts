import { toolOutput } from '../streamtool/tool-output.js';
import type { ServedRequest } from './served-request.js';

/**
 * Sends a served call's stream to the client as `notifications/progress`, when the client asked
 * for progress (`params._meta.progressToken`). The MCP specification requires `progress` to
 * increase with every notification, so it counts them (1, 2, 3…) and the fraction done is told
 * by `total`: `total` = `progress / fraction`, making `progress/total` the tool's fraction
 * (0.25, 0.25, 0.5 goes out as 1/4, 2/8, 3/6); without a known fraction (or at 0) there is no
 * `total`. A `partial` sends the next count with the last fraction and the partial as the
 * `message` (its text, or its JSON), so a plain MCP client that shows progress messages shows
 * the output as it comes.
 */
export class ProgressNotifier {
  readonly #request: ServedRequest;
  readonly #token: string | number | undefined;
  /** Notifications sent so far: the next one's `progress` is one more. */
  #count = 0;
  #fraction: number | undefined;
  /** Notifications the transport refused (it closed); nothing else is sent after one. */
  #failed = false;

  constructor(request: ServedRequest) {
    this.#request = request;
    const token = request.meta?.progressToken;
    this.#token = typeof token === 'string' || typeof token === 'number' ? token : undefined;
  }

  /** A `progress` event: `fraction` 0..1, or -1 when unknown. */
  progress(fraction: number, payload: unknown): Promise<void> {
    if (fraction >= 0) this.#fraction = fraction;
    return this.#send(payload === undefined ? undefined : toolOutput(payload));
  }

  /** A `partial` event: its text becomes the notification's message. */
  partial(payload: unknown): Promise<void> {
    return this.#send(toolOutput(payload));
  }

  async #send(message: string | undefined): Promise<void> {
    const progressToken = this.#token;
    if (progressToken === undefined || this.#failed) return;
    this.#count += 1;
    const progress = this.#count;
    const params: {
      progressToken: string | number;
      progress: number;
      total?: number;
      message?: string;
    } = { progressToken, progress };
    const fraction = this.#fraction;
    if (fraction !== undefined && fraction > 0) params.total = progress / fraction;
    if (message !== undefined && message !== '') params.message = message;
    try {
      await this.#request.notify({ method: 'notifications/progress', params });
    } catch {
      // The client is gone; the call's result will not reach it either.
      this.#failed = true;
    }
  }
}
