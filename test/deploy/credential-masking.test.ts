import { describe, expect, it } from 'vitest';
import { loadCollectorConfig } from './collector-config.js';
import { applyMaskingRules, maskingRules } from './masking-rules.js';

const rules = maskingRules(loadCollectorConfig('otel-collector-config.yaml'));

/** Values the processor must rewrite, with what should come out. */
const SECRETS: readonly (readonly [string, string])[] = [
  [
    'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl',
    'Authorization: Bearer [REDACTED]',
  ],
  [
    'curl -H "authorization: bearer abcdefgh12345678" https://api',
    'curl -H "authorization: Bearer [REDACTED]" https://api',
  ],
  ['using key sk-proj-AbCdEf0123456789_xyz now', 'using key sk-[REDACTED] now'],
  ['sk-ant-api03-abcdefghijklmnopqrstuv', 'sk-[REDACTED]'],
  [
    'https://db.example/login?user=ann&password=hunter2&next=/home',
    'https://db.example/login?user=ann&password=[REDACTED]&next=/home',
  ],
  ['PASSWORD=S3cr3t!; retrying', 'PASSWORD=[REDACTED]; retrying'],
  ['redirect?access_token=abc.def-123', 'redirect?access_token=[REDACTED]'],
  ['api-key=xyz987 api_key=abc123', 'api-key=[REDACTED] api_key=[REDACTED]'],
  ['pwd=1,secret=2', 'pwd=[REDACTED],secret=[REDACTED]'],
];

/** Ordinary tool output that looks a little like a secret and must come through unchanged. */
const ORDINARY = [
  'the bearer of bad news',
  'Bearer short',
  'risk-free, task-1234, sk-short',
  'password reset requested for ann',
  'max_tokens=1024 tokens=12',
  'wrote 3 sections (1.2 kB)',
];

describe('credential masking (transform/mask-credentials)', () => {
  it('translates every statement', () => {
    expect(rules.length).toBeGreaterThan(0);
  });

  describe.each([
    ['span', 'attributes'],
    ['span', 'status.message'],
    ['spanevent', 'attributes'],
  ])('in %s %s', (context, target) => {
    it.each(SECRETS)('masks %j', (input, expected) => {
      expect(applyMaskingRules(rules, context, target, input)).toBe(expected);
    });

    it.each(ORDINARY)('leaves %j alone', (input) => {
      expect(applyMaskingRules(rules, context, target, input)).toBe(input);
    });
  });

  it('applies the same patterns to span attributes, event attributes and the status message', () => {
    const patternsOf = (context: string, target: string): string[] =>
      rules
        .filter((rule) => rule.context === context && rule.target === target)
        .map((rule) => `${rule.pattern.source} -> ${rule.replacement}`);
    const spanAttributes = patternsOf('span', 'attributes');
    expect(patternsOf('spanevent', 'attributes')).toEqual(spanAttributes);
    expect(patternsOf('span', 'status.message')).toEqual(spanAttributes);
  });
});
