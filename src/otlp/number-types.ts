/** Keys remembered at most; past it, new fractional keys are still sent as doubles when fractional. */
const MAX_KEYS = 4096;

/**
 * Decides, per attribute key, whether a JavaScript number goes out as an OTLP `int` or `double`.
 * JavaScript has one number type, so a key whose values are sometimes whole (`progress` 0 or 1)
 * and sometimes not (0.5) would be sent as int in one span and double in the next, which
 * backends store as two columns or reject as a type conflict. So: the keys it is given, those
 * fractional by nature (the sidecar gives tooltrace's own), are always doubles, and any other key
 * becomes a double for good once it carried a fractional value (spans sent before that keep their
 * ints; what follows is consistent).
 */
export class NumberTypes {
  readonly #doubles: Set<string>;

  /** `doubleKeys`: keys whose numbers are always doubles, even when whole. @default none */
  constructor(doubleKeys: Iterable<string> = []) {
    this.#doubles = new Set(doubleKeys);
  }

  /** Whether numbers of `key` are doubles already, whatever the next value. */
  isDoubleKey(key: string): boolean {
    return this.#doubles.has(key);
  }

  /** Whether `value` (of attribute `key`) is written as a double. */
  isDouble(key: string, value: number): boolean {
    if (this.#doubles.has(key)) return true;
    if (Number.isInteger(value) && Math.abs(value) < 2 ** 63) return false;
    if (this.#doubles.size < MAX_KEYS) this.#doubles.add(key);
    return true;
  }

  /** The same for an array: doubles throughout when any element is fractional. */
  isDoubleArray(key: string, values: readonly unknown[]): boolean {
    if (this.#doubles.has(key)) return true;
    for (const value of values) {
      if (typeof value === 'number' && this.isDouble(key, value)) return true;
    }
    return false;
  }
}
