import { describe, expect, it } from 'vitest';
import { decodeLogsRequest } from '../../src/otlp/index.js';
import { otlpProtoTypes } from './otlp-proto-schema.js';

const TRACE_ID = '5b8efff798038103d269b633813fc60c';
const SPAN_ID = 'eee19b7ec3c1b174';

function protobufLogs(request: Record<string, unknown>): Uint8Array {
  const type = otlpProtoTypes().exportLogsServiceRequest;
  return type.encode(type.fromObject(request)).finish();
}

const JSON_LOGS_REQUEST = {
  resourceLogs: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
      scopeLogs: [
        {
          scope: { name: 'logger', version: '3' },
          logRecords: [
            {
              timeUnixNano: '1700000000123456789',
              observedTimeUnixNano: '1700000000223456789',
              severityNumber: 17,
              severityText: 'ERROR',
              body: {
                kvlistValue: { values: [{ key: 'message', value: { stringValue: 'failed' } }] },
              },
              attributes: [{ key: 'attempt', value: { intValue: '2' } }],
              traceId: TRACE_ID,
              spanId: SPAN_ID,
              flags: 1,
              eventName: 'tool.failed',
            },
            { severityNumber: 'SEVERITY_NUMBER_WARN2', body: { stringValue: 'plain' } },
          ],
        },
      ],
    },
  ],
};

describe('decodeLogsRequest()', () => {
  it('decodes OTLP/JSON log records', () => {
    const records = decodeLogsRequest(
      new TextEncoder().encode(JSON.stringify(JSON_LOGS_REQUEST)),
      'application/json',
    );
    expect(records).toEqual([
      {
        timeUnixNano: 1_700_000_000_123_456_789n,
        observedTimeUnixNano: 1_700_000_000_223_456_789n,
        severityNumber: 17,
        severityText: 'ERROR',
        body: { message: 'failed' },
        attributes: { attempt: 2 },
        droppedAttributesCount: 0,
        flags: 1,
        traceId: TRACE_ID,
        spanId: SPAN_ID,
        eventName: 'tool.failed',
        resource: { 'service.name': 'svc' },
        scope: { name: 'logger', version: '3' },
        encoding: 'json',
      },
      expect.objectContaining({
        timeUnixNano: 0n,
        severityNumber: 14,
        body: 'plain',
        traceId: '',
        spanId: '',
      }) as unknown,
    ]);
  });

  it('decodes protobuf log records with the opentelemetry-proto field numbers', () => {
    const [record] = decodeLogsRequest(
      protobufLogs({
        resourceLogs: [
          {
            scopeLogs: [
              {
                logRecords: [
                  {
                    timeUnixNano: '1700000000123456789',
                    observedTimeUnixNano: '1700000000223456789',
                    severityNumber: 9,
                    severityText: 'INFO',
                    body: { bytesValue: new Uint8Array([1, 2]) },
                    attributes: [{ key: 'big', value: { intValue: '9223372036854775807' } }],
                    droppedAttributesCount: 1,
                    traceId: Buffer.from(TRACE_ID, 'hex'),
                    spanId: Buffer.from(SPAN_ID, 'hex'),
                    eventName: 'event',
                  },
                ],
              },
            ],
          },
        ],
      }),
      'application/x-protobuf',
    );
    expect(record).toEqual({
      timeUnixNano: 1_700_000_000_123_456_789n,
      observedTimeUnixNano: 1_700_000_000_223_456_789n,
      severityNumber: 9,
      severityText: 'INFO',
      body: new Uint8Array([1, 2]),
      attributes: { big: 9_223_372_036_854_775_807n },
      droppedAttributesCount: 1,
      flags: 0,
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      eventName: 'event',
      resource: {},
      scope: { name: '', version: '' },
      encoding: 'protobuf',
    });
  });

  it('names the offending field of a malformed record', () => {
    const body = { resourceLogs: [{ scopeLogs: [{ logRecords: [{ spanId: 'nothex!' }] }] }] };
    expect(() =>
      decodeLogsRequest(new TextEncoder().encode(JSON.stringify(body)), 'application/json'),
    ).toThrow(/^resourceLogs\[0\]\.scopeLogs\[0\]\.logRecords\[0\]\.spanId: expected 16 hex/);
  });
});
