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
 * nesting deeper than `maxDepth`, a key that could reach a prototype (`__proto__`,
 * `constructor`, `prototype`: `JSON.parse` makes `__proto__` an own property, and a later
 * `Object.assign` or deep merge would use it as the prototype setter), or, when `checkStrings`
 * is set, a string or key with an unpaired surrogate.
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
    if (key.length >= 9 && (key === '__proto__' || key === 'constructor' || key === 'prototype')) {
      return { reason: 'hostile_key', path: [key], detail: `key "${key}" is not allowed` };
    }
    if (checkStrings && !isWellFormed(key)) {
      return { reason: 'lone_surrogate', path: [], detail: 'a key has an unpaired surrogate' };
    }
    const item = record[key];
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
