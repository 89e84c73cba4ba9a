import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_GEN_AI_CONVERSATION_ID } from '../../otel/internal.js';
import { unscopedSession } from './client-scope.js';

/** The span attribute naming the HTTP client (its token's name) a span's events came from. */
export const ATTR_TOOLTRACE_CLIENT = 'tooltrace.client';

/**
 * Puts the client's name on every span of a client's events (`tooltrace.client`) and gives
 * `gen_ai.conversation.id` back its original value: the pipeline scopes session ids per client
 * so that clients' calls never meet in the tracer, and the scoped id says whose they are. Runs
 * before the export processor, when the span starts, so in-flight snapshots carry it too.
 */
export class ClientAttributeProcessor implements SpanProcessor {
  onStart(span: Span, _parentContext: Context): void {
    const value = span.attributes[ATTR_GEN_AI_CONVERSATION_ID];
    if (typeof value !== 'string') return;
    const scope = unscopedSession(value);
    if (scope === undefined) return;
    span.setAttribute(ATTR_TOOLTRACE_CLIENT, scope.client);
    if (scope.session !== '') {
      span.setAttribute(ATTR_GEN_AI_CONVERSATION_ID, scope.session);
    } else {
      // The line named no session: the span had none before the pipeline scoped it.
      delete (span.attributes as Record<string, unknown>)[ATTR_GEN_AI_CONVERSATION_ID];
    }
  }

  onEnd(_span: ReadableSpan): void {}

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
