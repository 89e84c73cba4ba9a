import type { TracerProvider } from '@opentelemetry/api';

interface Flushable {
  forceFlush?: () => Promise<void>;
  getDelegate?: () => TracerProvider;
}

/**
 * Flushes a tracer provider when it can: the API's `TracerProvider` has no `forceFlush`, the
 * SDK's providers do, and the global proxy provider hands the call to its delegate.
 */
export async function flushProvider(provider: TracerProvider): Promise<void> {
  const flushable = provider as Flushable;
  const target =
    typeof flushable.forceFlush === 'function'
      ? flushable
      : (flushable.getDelegate?.() as Flushable | undefined);
  if (typeof target?.forceFlush === 'function') await target.forceFlush();
}
