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

/**
 * Flushes every distinct provider in `providers` and resolves whatever happens: an exporter
 * failing (or the SDK's flush timing out) is handed to `onError`, never thrown at the caller —
 * telemetry must not break the host's shutdown path.
 */
export async function flushProviders(
  providers: readonly TracerProvider[],
  onError: (error: unknown) => void,
): Promise<void> {
  const distinct = [...new Set(providers)];
  const outcomes = await Promise.allSettled(distinct.map((provider) => flushProvider(provider)));
  for (const outcome of outcomes) if (outcome.status === 'rejected') onError(outcome.reason);
}
