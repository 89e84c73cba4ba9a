import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { TOOL_STREAM_PARTIAL, TOOL_STREAM_PROGRESS } from '../../events/index.js';
import { VERSION } from '../../version.js';
import { ATTR_GEN_AI_TOOL_CALL_ID, ATTR_GEN_AI_TOOL_NAME } from '../attribute-names.js';
import type { ContentCapture } from '../content-capture.js';
import type { LoggerProviderLike, StreamLogger } from '../logger-provider.js';
import type { OpenCall } from './open-call.js';
import { payloadBytes } from '../../bus/payload-bytes.js';
import { streamEventAttributes } from './stream-event-attributes.js';
import { PARTIAL, type StreamKind } from './stream-sampler.js';

/** `SeverityNumber.INFO` of `@opentelemetry/api-logs`. */
const SEVERITY_INFO = 9;

/**
 * Stream events as OpenTelemetry log records (`streamEvents: 'log-records'` or `'both'`), the
 * form OpenTelemetry moves events to as it deprecates the span-event API: one record per
 * `tool.stream.progress` or `tool.stream.partial`, named by `event.name`, at the event's time,
 * in the context of the call's span (so it carries the span's trace and span id), with the
 * attributes and content rules of the span events, plus the tool's name and call id. Every
 * event becomes a record: the logs pipeline's own batching bounds what is held.
 */
export class StreamLogRecords {
  readonly #logger: StreamLogger;
  readonly #capture: ContentCapture | undefined;

  constructor(provider: LoggerProviderLike, capture: ContentCapture | undefined) {
    this.#logger = provider.getLogger('tooltrace', VERSION);
    this.#capture = capture;
  }

  emit(
    call: OpenCall,
    kind: StreamKind,
    timeUnixNano: bigint,
    sequence: unknown,
    progress: unknown,
    payload: unknown,
    own: unknown,
  ): void {
    const seq = typeof sequence === 'number' && Number.isSafeInteger(sequence) ? sequence : 0;
    const partial = kind === PARTIAL;
    const value = partial ? payloadBytes(payload) : typeof progress === 'number' ? progress : -1;
    const attributes = streamEventAttributes(kind, seq, value, payload, this.#capture, own);
    attributes[ATTR_GEN_AI_TOOL_NAME] = call.toolName;
    if (call.callId !== '') attributes[ATTR_GEN_AI_TOOL_CALL_ID] = call.callId;
    this.#logger.emit({
      eventName: partial ? TOOL_STREAM_PARTIAL : TOOL_STREAM_PROGRESS,
      timestamp: call.hrTime(timeUnixNano),
      severityNumber: SEVERITY_INFO,
      attributes,
      context: trace.setSpanContext(ROOT_CONTEXT, call.spanContext),
    });
  }
}
