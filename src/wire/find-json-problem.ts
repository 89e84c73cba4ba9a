import { isWellFormed } from './well-formed.js';

/** What {@link findJsonProblem} found wrong, and where (`path` is built while unwinding). */
export interface JsonProblem {
  reason: 'too_deep' | 'hostile_key' | 'lone_surrogate';
  /** Keys and array indexes from the root to the problem. */
  path: (string | number)[];
  detail: string;
}

/**
 * Walks a value `JSON.parse` returned and reports the first thing that must not get further: a
 * nesting deeper than `maxDepth`, a key that could lead to a prototype (`__proto__`, which
 * `JSON.parse` makes an own property and `Object.assign` or a deep merge then uses as the
 * prototype setter; `constructor` or `prototype` with an object value, the path a deep merge
 * follows from a plain object to `Object.prototype`), or, when `checkStrings` is set, a string or
 * key with an unpaired surrogate.
 *
 * The walk never goes deeper than `maxDepth + 1` frames, so it cannot overflow the stack however
 * deep the input is (V8's `JSON.parse` itself is not recursive). On the common path it costs a
 * few percent of the `JSON.parse` that preceded it: `for…in` over parse-created objects is fast,
 * and keys are compared only when they are long enough to be hostile.
 */
export function findJsonProblem(
  root: object,
  maxDepth: number,
  checkStrings: boolean,
): JsonProblem | undefined {
  const problem = inspect(root, 1, maxDepth, checkStrings);
  if (problem !== undefined) problem.path.reverse();
  return problem;
}

function inspect(
  value: object,
  depth: number,
  maxDepth: number,
  checkStrings: boolean,
): JsonProblem | undefined {
  if (depth > maxDepth) {
    return { reason: 'too_deep', path: [], detail: `nesting deeper than ${maxDepth} levels` };
  }
  // The member check below is written out for arrays and for objects on purpose: folding it into
  // one helper measured 5–8% slower per decoded line (bench/wire.bench.ts).
  if (Array.isArray(value)) {
    const items = value as unknown[];
    for (let index = 0; index < items.length; index += 1) {
      const item = items[index];
      let problem: JsonProblem | undefined;
      if (typeof item === 'object') {
        if (item !== null) problem = inspect(item, depth + 1, maxDepth, checkStrings);
      } else if (checkStrings && typeof item === 'string' && !isWellFormed(item)) {
        problem = loneSurrogate();
      }
      if (problem !== undefined) {
        problem.path.push(index);
        return problem;
      }
    }
    return undefined;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const item = record[key];
    if (key.length >= 9 && isHostileKey(key, item)) {
      const detail =
        key === '__proto__'
          ? 'key "__proto__" is not allowed'
          : `key "${key}" with an object or array value is not allowed`;
      return { reason: 'hostile_key', path: [key], detail };
    }
    if (checkStrings && !isWellFormed(key)) {
      return { reason: 'lone_surrogate', path: [], detail: 'a key has an unpaired surrogate' };
    }
    let problem: JsonProblem | undefined;
    if (typeof item === 'object') {
      if (item !== null) problem = inspect(item, depth + 1, maxDepth, checkStrings);
    } else if (checkStrings && typeof item === 'string' && !isWellFormed(item)) {
      problem = loneSurrogate();
    }
    if (problem !== undefined) {
      problem.path.push(key);
      return problem;
    }
  }
  return undefined;
}

/**
 * `__proto__` with any value, and `constructor` or `prototype` holding an object or array: the
 * shapes through which a deep merge reaches a prototype (`{"constructor":{"prototype":{…}}}`).
 * The same keys with a scalar value (`{"constructor":"Foo"}`, a plausible tool argument) are
 * harmless under `Object.assign`, spread and deep merge alike, and pass.
 */
function isHostileKey(key: string, value: unknown): boolean {
  if (key === '__proto__') return true;
  return (
    (key === 'constructor' || key === 'prototype') && typeof value === 'object' && value !== null
  );
}

function loneSurrogate(): JsonProblem {
  return { reason: 'lone_surrogate', path: [], detail: 'string has an unpaired surrogate' };
}

/** `payload.arguments[2].name` for a path of keys and `[index]` segments. */
export function formatJsonPath(path: readonly (string | number)[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? segment : `.${segment}`;
  }
  return text === '' ? 'the line' : text;
}
