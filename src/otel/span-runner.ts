import { context as contextApi, trace, type Context, type Span } from '@opentelemetry/api';
import type { ScopeRunner } from '../bus/index.js';
import { BorrowedSpan } from './borrowed-span.js';

/**
 * A {@link ScopeRunner} that makes `span` the active span around the code it runs. The context
 * is made once, from the one active when first used: every handler of one dispatch runs in the
 * same context, and later dispatches of the same start event are duplicates. A borrowed span's
 * code runs inside its owner's span itself.
 */
export function spanRunner(span: Span): ScopeRunner {
  const active = span instanceof BorrowedSpan ? span.owner : span;
  let spanContext: Context | undefined;
  return <A extends unknown[], R>(fn: (...args: A) => R, ...args: A): R =>
    contextApi.with(
      (spanContext ??= trace.setSpan(contextApi.active(), active)),
      fn,
      undefined,
      ...args,
    );
}
