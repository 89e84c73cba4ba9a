/** How many values of a structured payload {@link payloadBytes} looks at before it stops. */
const MAX_NODES = 1000;
const MAX_DEPTH = 32;

/**
 * The size in bytes of a stream payload, without serializing it: the UTF-8 length of a string,
 * the `byteLength` of binary data, and for anything else an estimate of its JSON size from a
 * walk of at most 1000 values (strings by UTF-8 length, keys, numbers, punctuation). Past that
 * budget the estimate is a lower bound. Content capture never changes the figure, so a span
 * reports the same size whether or not its payloads are recorded.
 */
export function payloadBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (value === undefined || value === null) return 0;
  if (ArrayBuffer.isView(value)) return value.byteLength;
  if (value instanceof ArrayBuffer) return value.byteLength;
  const budget = { nodes: MAX_NODES };
  return estimate(value, budget, 0);
}

function estimate(value: unknown, budget: { nodes: number }, depth: number): number {
  if (budget.nodes <= 0) return 0;
  budget.nodes -= 1;
  switch (typeof value) {
    case 'string':
      return Buffer.byteLength(value, 'utf8') + 2;
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4;
    case 'boolean':
      return value ? 4 : 5;
    case 'bigint':
      return value.toString().length + 2;
    case 'object': {
      if (value === null) return 4;
      if (depth >= MAX_DEPTH) return 0;
      if (Array.isArray(value)) {
        let size = 2 + Math.max(0, value.length - 1);
        for (const item of value) {
          if (budget.nodes <= 0) break;
          size += estimate(item, budget, depth + 1);
        }
        return size;
      }
      if (ArrayBuffer.isView(value)) return value.byteLength;
      let size = 2;
      let members = 0;
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        if (budget.nodes <= 0) break;
        const member = (value as Record<string, unknown>)[key];
        if (member === undefined || typeof member === 'function') continue;
        size += Buffer.byteLength(key, 'utf8') + 3 + estimate(member, budget, depth + 1);
        members += 1;
      }
      return size + Math.max(0, members - 1);
    }
    default:
      return 0;
  }
}
