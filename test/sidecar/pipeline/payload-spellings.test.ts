import { describe, expect, it } from 'vitest';
import { EventBus, type BusEvent } from '../../../src/bus/index.js';
import { EventPipeline, SidecarMetrics } from '../../../src/sidecar/pipeline/index.js';

function line(type: string, payload: unknown, session = 's1'): string {
  return JSON.stringify({ ts: '2026-05-01T12:00:00Z', type, session_id: session, payload });
}

describe('EventPipeline', () => {
  describe('source()', () => {
    it('replays every spelling of a payload as the typed payload, and counts what it rejects or drops by field', () => {
      const bus = new EventBus({ ringSize: 0, dispatchFrames: false });
      const seen: BusEvent[] = [];
      bus.subscribeAll((event) => void seen.push(event));
      const metrics = new SidecarMetrics();
      const pipeline = new EventPipeline({ bus, metrics, maxLineBytes: 1 << 20 });
      const journal = [
        line('io.session.start', { session_id: 'a' }, ''),
        line('tool.invoke', { ID: 'tc_1', Name: 'ls', TurnID: 't1' }),
        line('tool.invoke', { id: 'tc_2', name: 'ls', turn_id: 't1' }),
        line('tool.invoke', { id: 'tc_3', name: 'ls', turnId: 't1' }),
        line('tool.invoke', { ID: 7, Name: 'ls' }),
        line('tool.result', { ID: 'tc_1', ErrorType: 500 }),
        '{"ts":"2026-05-01T12:00:00Z","type":"tool.result","payload":{"__proto__":{},"id":"tc_2"}}',
        '{"ts":"2026-05-01T12:00:00Z","type":"llm.request","payload":{"constructor":{"a":1}}}',
      ];
      const source = pipeline.source('stdin');
      source.push(new TextEncoder().encode(journal.join('\n')));
      source.end();

      expect(seen.map((event) => event.payload)).toEqual([
        { sessionId: 'a' },
        { id: 'tc_1', name: 'ls', arguments: {}, turnId: 't1' },
        { id: 'tc_2', name: 'ls', arguments: {}, turnId: 't1' },
        { id: 'tc_3', name: 'ls', arguments: {}, turnId: 't1' },
        { id: 'tc_1', name: '', output: '' },
      ]);
      const snapshot = metrics.snapshot();
      expect(snapshot.rejected).toEqual({ wrong_type: 1, hostile_key: 2 });
      expect(snapshot.fieldsDropped).toEqual({ 'tool.result payload.ErrorType': 1 });
    });
  });
});
