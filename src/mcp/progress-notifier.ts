import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { toolOutput } from '../streamtool/tool-output.js';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * Sends a served call's stream to the client as `notifications/progress`, when the client asked
 * for progress (`params._meta.progressToken`). A `progress` event with a known fraction sends
 * `progress` = the fraction and `total` = 1; one without sends the count of progress events so
 * far and no total, until a fraction is known. A `partial` sends the last progress again with the
 * partial as the `message` (its text, or its JSON), so a plain MCP client that shows progress
 * messages shows the output as it comes.
 */
export class ProgressNotifier {
  readonly #extra: Extra;
  readonly #token: string | number | undefined;
  #count = 0;
  #fraction: number | undefined;
  /** Notifications the transport refused (it closed); nothing else is sent after one. */
  #failed = false;

  constructor(extra: Extra) {
    this.#extra = extra;
    const token = extra._meta?.progressToken;
    this.#token = typeof token === 'string' || typeof token === 'number' ? token : undefined;
  }

  /** A `progress` event: `fraction` 0..1, or -1 when unknown. */
  progress(fraction: number, payload: unknown): Promise<void> {
    this.#count += 1;
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
    const params: {
      progressToken: string | number;
      progress: number;
      total?: number;
      message?: string;
    } =
      this.#fraction === undefined
        ? { progressToken, progress: this.#count }
        : { progressToken, progress: this.#fraction, total: 1 };
    if (message !== undefined && message !== '') params.message = message;
    try {
      await this.#extra.sendNotification({ method: 'notifications/progress', params });
    } catch {
      // The client is gone; the call's result will not reach it either.
      this.#failed = true;
    }
  }
}
