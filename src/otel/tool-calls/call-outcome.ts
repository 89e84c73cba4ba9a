import { SpanStatusCode } from '@opentelemetry/api';
import {
  ATTR_END_REASON,
  ATTR_ERROR_TYPE,
  ATTR_EXCEPTION_MESSAGE,
  ATTR_EXCEPTION_TYPE,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_INVOKE_LATE,
  ATTR_INVOKE_MISSING,
  ATTR_RESULT_EVENT_ID,
  ATTR_TOOL_CANCELLED,
  ERROR_TYPE_ABANDONED,
  ERROR_TYPE_CANCELLED,
  ERROR_TYPE_OTHER,
  EVENT_EXCEPTION,
  type EndReason,
} from '../attribute-names.js';
import type { ContentCapture, MessageFilter } from '../content-capture.js';
import { hrTimeFromUnixNano } from '../hr-time.js';
import type { OpenCall } from './open-call.js';
import { writeToolAttributes } from './tool-attributes.js';
import type { ResultFields } from './tool-payloads.js';

/**
 * Writes the outcome of a call that ended with its `tool.result` onto its span: the stream
 * summary, status OK, or status ERROR with `error.type` (`cancelled` for a cancelled call, which
 * also gets `tooltrace.tool.cancelled=true`; the result's `errorType`, else `_OTHER`) and an
 * `exception` event at the result's time; the output only with content capture; the span
 * attributes the result carries.
 */
export function applyResult(
  call: OpenCall,
  result: ResultFields,
  resultEventId: string,
  timeUnixNano: bigint,
  capture: ContentCapture | undefined,
  filterMessage: MessageFilter,
): void {
  const span = call.span;
  call.flushStream();
  writeOutcome(call, 'result');
  if (resultEventId !== '') span.setAttribute(ATTR_RESULT_EVENT_ID, resultEventId);
  if (result.attributes !== undefined) writeToolAttributes(span, result.attributes);
  if (capture !== undefined && result.output !== undefined && result.output !== '') {
    const text = capture.text(ATTR_GEN_AI_TOOL_CALL_RESULT, result.output);
    if (text !== undefined) span.setAttribute(ATTR_GEN_AI_TOOL_CALL_RESULT, text);
  }
  if (result.error === '' && !result.cancelled) {
    span.setStatus(STATUS_OK);
    return;
  }
  const errorType = result.cancelled
    ? ERROR_TYPE_CANCELLED
    : result.errorType !== ''
      ? result.errorType
      : ERROR_TYPE_OTHER;
  const message = filterMessage(result.error !== '' ? result.error : 'cancelled');
  call.fail(errorType);
  span.setAttribute(ATTR_ERROR_TYPE, errorType);
  if (result.cancelled) span.setAttribute(ATTR_TOOL_CANCELLED, true);
  span.addEvent(
    EVENT_EXCEPTION,
    { [ATTR_EXCEPTION_TYPE]: errorType, [ATTR_EXCEPTION_MESSAGE]: message },
    hrTimeFromUnixNano(timeUnixNano),
  );
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/**
 * Writes the outcome of a call that ended without its `tool.result`. Abandoned (idle for
 * `idleTimeoutMs`) is an error — the agent never got an answer — with `error.type=abandoned`
 * and no exception event (nothing was thrown). Evicted and shutdown leave the status UNSET: the
 * call was cut short by tooltrace's own bounds or by the process ending, not by the tool.
 */
export function applyUnfinished(call: OpenCall, reason: EndReason, idleTimeoutMs: number): void {
  const span = call.span;
  call.flushStream();
  writeOutcome(call, reason);
  if (reason !== 'abandoned') return;
  call.fail(ERROR_TYPE_ABANDONED);
  span.setAttribute(ATTR_ERROR_TYPE, ERROR_TYPE_ABANDONED);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: `no tool.result within ${idleTimeoutMs} ms of the call's last event`,
  });
}

/** The status of every call that succeeded; the SDK copies what it is given. */
const STATUS_OK = { code: SpanStatusCode.OK } as const;

/**
 * Writes the stream summary and why the span ended straight into the span, one attribute at a
 * time: an object handed to `setAttributes` would only be copied key by key.
 */
function writeOutcome(call: OpenCall, reason: EndReason): void {
  const span = call.span;
  call.writeSummary(span);
  span.setAttribute(ATTR_END_REASON, reason);
  if (call.orphan && !call.invokeLate) span.setAttribute(ATTR_INVOKE_MISSING, true);
  if (call.invokeLate) span.setAttribute(ATTR_INVOKE_LATE, true);
}
