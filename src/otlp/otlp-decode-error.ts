import { TooltraceError } from '../errors/index.js';

/**
 * Thrown when an OTLP request body cannot be decoded: malformed protobuf or JSON, a field of the
 * wrong type, an id that is not hex. The message names the field (for example
 * `resourceSpans[0].scopeSpans[0].spans[2].traceId`) and `where` holds that path on its own.
 */
export class OtlpDecodeError extends TooltraceError {
  /** Path of the offending field inside the request, `''` when the whole body is at fault. */
  readonly where: string;

  constructor(message: string, options: { where?: string; cause?: unknown } = {}) {
    const where = options.where ?? '';
    super(where === '' ? message : `${where}: ${message}`, { cause: options.cause });
    this.where = where;
  }
}
