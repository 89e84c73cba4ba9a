import { describe, expect, it } from 'vitest';
import { startOtlpReceiver } from '../../src/testing/index.js';
import { runExample } from './run-example.js';

describe('examples/library-mode.ts', () => {
  it("runs and prints the tool span as a child of the app's request span, in one trace", async () => {
    const { stdout, stderr } = await runExample('library-mode.ts');
    expect(stderr).toBe('');
    expect(stdout.trim().split('\n')).toEqual([
      'tool result: 2 documents',
      'POST /chat  parent: (root)  events: 0',
      'execute_tool search_docs  parent: POST /chat  events: 2',
      'one trace',
    ]);
  });

  it('exports to OTEL_EXPORTER_OTLP_ENDPOINT when it is set', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const { stdout, stderr } = await runExample('library-mode.ts', {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      });
      expect(stderr).toBe('');
      expect(stdout).toContain(`spans sent to ${receiver.url}`);
      const spans = await receiver.waitForSpans(2);
      const request = spans.find((span) => span.name === 'POST /chat');
      const tool = spans.find((span) => span.name === 'execute_tool search_docs');
      expect(request?.kind).toBe(2);
      expect(tool?.parentSpanId).toBe(request?.spanId);
      expect(tool?.traceId).toBe(request?.traceId);
      expect(tool?.attributes['gen_ai.tool.call.id']).toBe('tc_1');
    } finally {
      await receiver.close();
    }
  });
});
