import type { Tracer, TracerOptions, TracerProvider } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { IdGenerator, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SidecarTracer, type SidecarTracerSettings } from './sidecar-tracer.js';

/** Options for {@link SidecarTracerProvider}. */
export interface SidecarTracerProviderOptions {
  /** The resource every span carries (`service.name` and the rest). */
  resource: Resource;
  /** Where span and trace ids come from (the sidecar's `DerivedIdGenerator`). */
  idGenerator: IdGenerator;
  /** The one processor ended spans go to. */
  spanProcessor: SpanProcessor;
}

/**
 * The tracer provider the sidecar gives `traceToolCalls`: it produces, span for span, what the
 * SDK's `BasicTracerProvider` with default limits, sampler and one span processor produces, at
 * a fraction of its per-span cost (the SDK checks and copies attributes three times, reads two
 * clocks per span and keeps per-span metrics hooks; tracing is most of the sidecar's CPU).
 * It carries no sampler, limit or environment configuration: the sidecar needs none.
 */
export class SidecarTracerProvider implements TracerProvider {
  readonly #settings: SidecarTracerSettings;
  readonly #tracers = new Map<string, SidecarTracer>();

  constructor(options: SidecarTracerProviderOptions) {
    this.#settings = {
      resource: options.resource,
      idGenerator: options.idGenerator,
      processor: options.spanProcessor,
    };
  }

  /** One tracer per name, version and schema URL, as the SDK keeps them. */
  getTracer(name: string, version?: string, options?: TracerOptions): Tracer {
    const key = `${name}@${version ?? ''}:${options?.schemaUrl ?? ''}`;
    let tracer = this.#tracers.get(key);
    if (tracer === undefined) {
      tracer = new SidecarTracer({ name, version, schemaUrl: options?.schemaUrl }, this.#settings);
      this.#tracers.set(key, tracer);
    }
    return tracer;
  }

  /** The span processor's `forceFlush()`, with no timeout of its own. */
  forceFlush(): Promise<void> {
    return this.#settings.processor.forceFlush();
  }

  /** The span processor's `shutdown()`. */
  shutdown(): Promise<void> {
    return this.#settings.processor.shutdown();
  }
}
