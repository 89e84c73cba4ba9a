import { describe, expect, it } from 'vitest';
import { SidecarMetrics } from '../../../src/sidecar/pipeline/index.js';

describe('SidecarMetrics', () => {
  describe('fieldDropped()', () => {
    it('counts dropped fields by event type and field, saying which count is the first', () => {
      const metrics = new SidecarMetrics();
      expect(metrics.fieldDropped('subagent.complete', 'payload.Iterations')).toBe(true);
      expect(metrics.fieldDropped('subagent.complete', 'payload.Iterations')).toBe(false);
      expect(metrics.fieldDropped('tool.invoke', 'depth')).toBe(true);
      expect(metrics.snapshot().fieldsDropped).toEqual({
        'subagent.complete payload.Iterations': 2,
        'tool.invoke depth': 1,
      });
      expect(metrics.render()).toContain(
        'tooltrace_fields_dropped_total{event_type="subagent.complete",field="payload.Iterations"} 2',
      );
    });

    it('counts pairs beyond its bound under (other), so invented event types cannot grow it', () => {
      const metrics = new SidecarMetrics();
      for (let index = 0; index < 200; index += 1) metrics.fieldDropped(`type.${index}`, 'depth');
      expect(metrics.fieldDropped('type.200', 'depth')).toBe(true);
      expect(metrics.fieldDropped('type.201', 'source')).toBe(false);
      const counts = metrics.snapshot().fieldsDropped;
      expect(Object.keys(counts)).toHaveLength(201);
      expect(counts['(other) (other)']).toBe(2);
    });
  });
});
