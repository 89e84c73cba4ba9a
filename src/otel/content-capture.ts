import type { RedactHook } from './redact.js';

/** Turns an error message into what a span may show: cut and redacted, content capture or not. */
export type MessageFilter = (message: string) => string;

/** A character that marks text cut at the byte limit (3 bytes in UTF-8). */
const ELLIPSIS = '\u2026';
const ELLIPSIS_BYTES = 3;

/**
 * `text` cut to at most `maxBytes` bytes of UTF-8, never inside a character: a cut text ends
 * with `…` (counted in the limit).
 */
export function truncateUtf8(text: string, maxBytes: number): string {
  // Every UTF-16 code unit takes at most 3 bytes, so short text needs no encoding at all.
  if (text.length * 3 <= maxBytes) return text;
  // Every code unit takes at least a byte: past `maxBytes + 1` units nothing more can be kept,
  // so a 20 MB text is not encoded whole to keep its first kilobytes.
  const head = text.length > maxBytes + 1 ? text.slice(0, maxBytes + 1) : text;
  const bytes = Buffer.from(head, 'utf8');
  if (bytes.length <= maxBytes) return text;
  if (maxBytes < ELLIPSIS_BYTES) return '';
  let end = maxBytes - ELLIPSIS_BYTES;
  // Step back over continuation bytes (10xxxxxx) so the cut lands on a character boundary.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return bytes.toString('utf8', 0, end) + ELLIPSIS;
}

/**
 * The text a captured value is recorded as: a string as it is, anything else as JSON (or
 * a placeholder naming its type when it cannot be serialized), `undefined` for nothing.
 */
export function contentText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  try {
    const json = JSON.stringify(value, bigintAsString) as string | undefined;
    if (json !== undefined) return json;
  } catch {
    // Circular or otherwise unserializable: fall through to a placeholder.
  }
  return typeof value === 'symbol' ? value.toString() : `[unserializable ${typeof value}]`;
}

function bigintAsString(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/**
 * Turns captured content (arguments, payloads, outputs) into attribute text: serialized, cut
 * to the byte limit, passed through the redaction hook, and cut again if the hook made it
 * longer. A failing hook drops the value (never the unredacted text) and is reported.
 */
export class ContentCapture {
  readonly #maxBytes: number;
  readonly #redact: RedactHook;
  readonly #onRedactError: (error: unknown) => void;

  constructor(maxBytes: number, redact: RedactHook, onRedactError: (error: unknown) => void) {
    this.#maxBytes = maxBytes;
    this.#redact = redact;
    this.#onRedactError = onRedactError;
  }

  /**
   * What to keep of a value `bytes` large until it is recorded: the value itself within the byte
   * limit, otherwise its text cut to the limit (all that could be recorded of it), so a payload
   * held for a span event or a snapshot never keeps more than the limit alive.
   */
  held(value: unknown, bytes: number): unknown {
    if (bytes <= this.#maxBytes) return value;
    const text = contentText(value);
    return text === undefined ? undefined : truncateUtf8(text, this.#maxBytes);
  }

  /** The text to record for `value` under `key`, or `undefined` when there is none. */
  text(key: string, value: unknown, maxBytes = this.#maxBytes): string | undefined {
    const text = contentText(value);
    if (text === undefined) return undefined;
    const limit = Math.min(maxBytes, this.#maxBytes);
    let redacted: unknown;
    try {
      redacted = this.#redact(key, truncateUtf8(text, limit));
    } catch (error) {
      this.#onRedactError(error);
      return undefined;
    }
    if (typeof redacted !== 'string') {
      this.#onRedactError(new TypeError(`redact returned ${typeof redacted}, not a string`));
      return undefined;
    }
    return truncateUtf8(redacted, limit);
  }
}
