import { ConfigurationError } from '../../errors/index.js';

/**
 * Parses the W3C-baggage-like list `key=value,key2=value2` the OTLP variables use, with
 * percent-decoding. A malformed entry is a configuration error naming the variable.
 */
export function parseHeaders(text: string | undefined, setting: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(parseKeyValueList(text, setting))) {
    headers[key.toLowerCase()] = value;
  }
  return headers;
}

/**
 * Parses `key=value,key2=value2` with percent-decoding, as `OTEL_RESOURCE_ATTRIBUTES` and the
 * OTLP header variables are written. A malformed entry is a configuration error naming `setting`.
 */
export function parseKeyValueList(
  text: string | undefined,
  setting: string,
): Record<string, string> {
  const entries: Record<string, string> = Object.create(null) as Record<string, string>;
  if (text === undefined || text.trim() === '') return entries;
  for (const entry of text.split(',')) {
    if (entry.trim() === '') continue;
    const equals = entry.indexOf('=');
    if (equals <= 0) {
      throw new ConfigurationError(`${setting}: entry '${entry.trim()}' is not key=value`, {
        setting,
      });
    }
    try {
      const key = decodeURIComponent(entry.slice(0, equals).trim());
      entries[key] = decodeURIComponent(entry.slice(equals + 1).trim());
    } catch (error) {
      throw new ConfigurationError(`${setting}: entry '${entry.trim()}' is badly percent-encoded`, {
        setting,
        cause: error,
      });
    }
  }
  return entries;
}
