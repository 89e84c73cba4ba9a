import { describe, expect, it } from 'vitest';
import { redactCredentials } from '../../src/otel/index.js';

const redact = (value: string): string => redactCredentials('key', value);

describe('redactCredentials()', () => {
  it.each([
    ['Authorization: Bearer abc.def-ghi_jkl', 'Authorization: [REDACTED]'],
    ['curl -H "authorization: Basic dXNlcjpwYXNzd29yZA=="', 'curl -H "authorization: [REDACTED]"'],
    ['token is Bearer eyJhbGciOiJIUzI1NiJ9xyz', 'token is Bearer [REDACTED]'],
    ['key sk-proj-AbCdEfGhIjKlMnOp end', 'key sk-[REDACTED] end'],
    ['password=hunter22&user=bob', 'password=[REDACTED]&user=bob'],
    ['api_key: "abc123secret"', 'api_key: [REDACTED]'],
    ['{"client_secret":"s3cr3t","name":"x"}', '{"client_secret":"[REDACTED]","name":"x"}'],
    ['{"password": "a \\"quoted\\" one"}', '{"password": "[REDACTED]"}'],
    ['ACCESS_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123', 'ACCESS_TOKEN=[REDACTED]'],
    ['aws AKIAABCDEFGHIJKLMNOP here', 'aws [REDACTED] here'],
    ['postgres://admin:pa55word@db:5432/app', 'postgres://admin:[REDACTED]@db:5432/app'],
  ])('masks %j', (input, expected) => {
    expect(redact(input)).toBe(expected);
  });

  it.each([
    'the quick brown fox',
    'max_tokens: 512',
    '{"tokens": 20, "query": "otel"}',
    'https://example.com/path?q=1',
  ])('leaves %j alone', (input) => {
    expect(redact(input)).toBe(input);
  });
});
