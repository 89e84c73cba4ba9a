/**
 * Longest line, in bytes and without its LF or CRLF terminator, that the {@link LineSplitter}
 * and {@link decodeEnvelope} accept by default: 1 MiB. A tool call's envelope is a few hundred
 * bytes; a line this long is either a huge tool output or garbage, and must not cost more memory.
 */
export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024;

/**
 * Deepest nesting of objects and arrays (the envelope itself is level 1) that
 * {@link decodeEnvelope} accepts by default. Deeper documents are rejected as `too_deep` so that
 * nothing downstream (a recursive walk, `JSON.stringify` of span content) can run out of stack.
 */
export const DEFAULT_MAX_DEPTH = 64;
