import { describe, expect, it } from 'vitest';
import { withoutUrlCredentials } from '../../../src/sidecar/pipeline/url-credentials.js';

describe('withoutUrlCredentials', () => {
  it('masks the whole user information of every URL, a password holding @ included', () => {
    expect(withoutUrlCredentials('exporting to https://user:p@ss@collector:4318/v1/traces')).toBe(
      'exporting to https://***@collector:4318/v1/traces',
    );
    expect(withoutUrlCredentials('--otlp-endpoint=http://token@host a grpc://u:v@h:4317')).toBe(
      '--otlp-endpoint=http://***@host a grpc://***@h:4317',
    );
  });

  it('leaves alone URLs without credentials and @ signs of other text', () => {
    for (const text of [
      '{"url":"http://host","email":"a@b.c"}',
      'http://collector:4318/v1/traces?to=a@b',
      'see http://host/path/a@b and mail x@y',
    ]) {
      expect(withoutUrlCredentials(text)).toBe(text);
    }
  });
});
