import { decodeKeyValues } from './any-value.js';
import { recordField, recordsField, stringField, join, type OtlpRecord } from './otlp-fields.js';

/** The instrumentation scope (tracer or logger name and version) a span or log record came from. */
export interface ReceivedScope {
  name: string;
  version: string;
}

/**
 * Calls `each` for every item of an OTLP/JSON export request, in order, with its path, the
 * attributes of the resource it sits in and its scope (an absent scope is the unnamed one):
 * `resourceSpans[].scopeSpans[].spans[]`, and the same nesting of logs and metrics (`signal`
 * `Logs` or `Metrics`, `items` `logRecords` or `metrics`).
 */
export function forEachScopedItem(
  root: OtlpRecord,
  signal: 'Spans' | 'Logs' | 'Metrics',
  items: string,
  each: (
    item: OtlpRecord,
    where: string,
    resource: Record<string, unknown>,
    scope: ReceivedScope,
  ) => void,
): void {
  const resources = recordsField(root, `resource${signal}`, '');
  for (let resourceIndex = 0; resourceIndex < resources.length; resourceIndex += 1) {
    const resourcePath = `resource${signal}[${resourceIndex}]`;
    const resourceRecord = recordField(resources[resourceIndex]!, 'resource', resourcePath);
    const resource =
      resourceRecord === undefined
        ? {}
        : decodeKeyValues(resourceRecord, 'attributes', join(resourcePath, 'resource'));
    const scopes = recordsField(resources[resourceIndex]!, `scope${signal}`, resourcePath);
    for (let scopeIndex = 0; scopeIndex < scopes.length; scopeIndex += 1) {
      const scopePath = `${resourcePath}.scope${signal}[${scopeIndex}]`;
      const scopeRecord = recordField(scopes[scopeIndex]!, 'scope', scopePath);
      const scope = {
        name:
          scopeRecord === undefined ? '' : stringField(scopeRecord, 'name', `${scopePath}.scope`),
        version:
          scopeRecord === undefined
            ? ''
            : stringField(scopeRecord, 'version', `${scopePath}.scope`),
      };
      const list = recordsField(scopes[scopeIndex]!, items, scopePath);
      for (let index = 0; index < list.length; index += 1) {
        each(list[index]!, `${scopePath}.${items}[${index}]`, resource, scope);
      }
    }
  }
}
