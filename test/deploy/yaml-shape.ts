/** A YAML mapping, as the `yaml` package parses it. */
export type YamlMap = Record<string, unknown>;

/** Whether a parsed YAML value is a mapping (not a list, not a scalar, not null). */
export function isYamlMap(value: unknown): value is YamlMap {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value as a mapping; throws naming `where` when it is something else. */
export function mapAt(value: unknown, where: string): YamlMap {
  if (!isYamlMap(value))
    throw new TypeError(`${where}: expected a mapping, got ${describe(value)}`);
  return value;
}

/** The value as a mapping, or an empty one when it is missing (`key:` with nothing after it). */
export function optionalMapAt(value: unknown, where: string): YamlMap {
  return value === undefined || value === null ? {} : mapAt(value, where);
}

/** The value as a list; throws naming `where` when it is something else. */
export function listAt(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value))
    throw new TypeError(`${where}: expected a list, got ${describe(value)}`);
  return value as unknown[];
}

/** The value as a string; throws naming `where` when it is something else. */
export function stringAt(value: unknown, where: string): string {
  if (typeof value !== 'string') {
    throw new TypeError(`${where}: expected a string, got ${describe(value)}`);
  }
  return value;
}

/** The value as a list of strings. */
export function stringListAt(value: unknown, where: string): string[] {
  return listAt(value, where).map((item, index) => stringAt(item, `${where}[${index}]`));
}

/** The value as a number (YAML may give a port as a number or a string of digits). */
export function numberAt(value: unknown, where: string): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  throw new TypeError(`${where}: expected a number, got ${describe(value)}`);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'string' ? `the string ${JSON.stringify(value)}` : typeof value;
}
