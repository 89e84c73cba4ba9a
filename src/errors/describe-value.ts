const PREVIEW_LENGTH = 40;

/**
 * A short description of a value for rejection messages: strings quoted and cut to a preview (a
 * hostile line must not turn into a huge log line), numbers and booleans as they are, bigints
 * with their `n`, other values by kind.
 */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string': {
      const preview = value.length > PREVIEW_LENGTH ? `${value.slice(0, PREVIEW_LENGTH)}…` : value;
      return JSON.stringify(preview);
    }
    case 'number':
    case 'boolean':
      return String(value);
    case 'bigint':
      return `${value}n`;
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}
