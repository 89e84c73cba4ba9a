import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { encodeAll } from '../../otlp/encode-all.js';
import type { BatchTransport, ExportOutcome } from '../../../src/sidecar/export/index.js';

/**
 * Sends `spans` once through `transport`, as the `ReliableSpanProcessor` does one attempt:
 * encodes them into one batch, sends its body, releases it after the answer.
 */
export async function sendOnce<Body>(
  transport: BatchTransport<Body>,
  spans: readonly ReadableSpan[],
): Promise<ExportOutcome> {
  const body = encodeAll(transport.openBatch(), spans);
  try {
    return await transport.send(body);
  } finally {
    transport.releaseBatch(body);
  }
}
