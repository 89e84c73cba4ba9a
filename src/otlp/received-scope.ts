import { decodeKeyValues } from './any-value.js';
import { recordField, stringField, join, type OtlpRecord } from './otlp-fields.js';

/** The instrumentation scope (tracer or logger name and version) a span or log record came from. */
export interface ReceivedScope {
  name: string;
  version: string;
}

/** Decodes field `resource` of a `ResourceSpans`/`ResourceLogs` into its attributes. */
export function decodeResource(record: OtlpRecord, where: string): Record<string, unknown> {
  const resource = recordField(record, 'resource', where);
  return resource === undefined
    ? {}
    : decodeKeyValues(resource, 'attributes', join(where, 'resource'));
}

/** Decodes field `scope` of a `ScopeSpans`/`ScopeLogs`; an absent scope is the unnamed one. */
export function decodeScope(record: OtlpRecord, where: string): ReceivedScope {
  const scope = recordField(record, 'scope', where);
  if (scope === undefined) return { name: '', version: '' };
  const path = join(where, 'scope');
  return {
    name: stringField(scope, 'name', path),
    version: stringField(scope, 'version', path),
  };
}
