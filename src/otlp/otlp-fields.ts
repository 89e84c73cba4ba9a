import { describeValue } from '../errors/index.js';
import { OtlpDecodeError } from './otlp-decode-error.js';

// Helpers that read fields of a parsed OTLP/JSON message and fail with an OtlpDecodeError naming
// the field's path. An absent field and a `null` one are alike. Keys are lowerCamelCase per
// OTLP/JSON; the original snake_case names are accepted too, as the protobuf JSON mapping asks
// of parsers.

/** A parsed OTLP/JSON message. */
export type OtlpRecord = Readonly<Record<string, unknown>>;

const snakeCaseNames = new Map<string, string>();

/** The snake_case spelling of a lowerCamelCase field name (`traceId` → `trace_id`). */
export function snakeCaseOf(name: string): string {
  let snake = snakeCaseNames.get(name);
  if (snake === undefined) {
    snake = name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
    snakeCaseNames.set(name, snake);
  }
  return snake;
}

/** The value of field `name` (lowerCamelCase), `undefined` when absent or `null`. */
export function fieldOf(record: OtlpRecord, name: string): unknown {
  let value = record[name];
  if (value === undefined || value === null) {
    const snake = snakeCaseOf(name);
    value = snake === name ? undefined : record[snake];
  }
  return value ?? undefined;
}

/** Field `name` as a message, `undefined` when absent. */
export function recordField(
  record: OtlpRecord,
  name: string,
  where: string,
): OtlpRecord | undefined {
  const value = fieldOf(record, name);
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || Array.isArray(value) || value instanceof Uint8Array) {
    throw new OtlpDecodeError(`expected an object, got ${describeValue(value)}`, {
      where: join(where, name),
    });
  }
  return value as OtlpRecord;
}

/** Repeated field `name` as a list of messages, empty when absent. */
export function recordsField(
  record: OtlpRecord,
  name: string,
  where: string,
): readonly OtlpRecord[] {
  const value = fieldOf(record, name);
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    throw new OtlpDecodeError(`expected an array, got ${describeValue(value)}`, {
      where: join(where, name),
    });
  }
  for (let index = 0; index < value.length; index += 1) {
    const item: unknown = value[index];
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw new OtlpDecodeError(`expected an object, got ${describeValue(item)}`, {
        where: `${join(where, name)}[${index}]`,
      });
    }
  }
  return value as OtlpRecord[];
}

/** Field `name` as a string, `''` when absent. */
export function stringField(record: OtlpRecord, name: string, where: string): string {
  const value = fieldOf(record, name);
  if (value === undefined) return '';
  if (typeof value !== 'string') {
    throw new OtlpDecodeError(`expected a string, got ${describeValue(value)}`, {
      where: join(where, name),
    });
  }
  return value;
}

/**
 * Field `name` as a non-negative 32-bit integer (counts, flags), `0` when absent. JSON may carry
 * it as a number or a decimal string.
 */
export function uint32Field(record: OtlpRecord, name: string, where: string): number {
  const value = fieldOf(record, name);
  if (value === undefined) return 0;
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (
    typeof number !== 'number' ||
    !Number.isInteger(number) ||
    number < 0 ||
    number > 0xffffffff
  ) {
    throw new OtlpDecodeError(`expected an unsigned 32-bit integer, got ${describeValue(value)}`, {
      where: join(where, name),
    });
  }
  return number;
}

/**
 * Field `name` as an enum number, `0` when absent. OTLP/JSON requires integers; enum value names
 * (`SPAN_KIND_SERVER`) are accepted too, as the protobuf JSON mapping allows.
 */
export function enumField(
  record: OtlpRecord,
  name: string,
  where: string,
  names: Readonly<Record<string, number>>,
): number {
  const value = fieldOf(record, name);
  if (value === undefined) return 0;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && Object.hasOwn(names, value)) return names[value]!;
  throw new OtlpDecodeError(`expected an enum number, got ${describeValue(value)}`, {
    where: join(where, name),
  });
}

/** `where.name`, or `name` at the top level. */
export function join(where: string, name: string): string {
  return where === '' ? name : `${where}.${name}`;
}
