import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { COLLECTOR_CONFIGS, ROOT, validateCollectorConfig } from '../scripts/stack/stack.js';

const { collector } = inject('stackBinaries');

/**
 * The environment a Kubernetes ConfigMap's `${env:…}` references get: the variables of the
 * Deployment that mounts it (deploy/kubernetes/collector/<tier>.yaml).
 */
function deploymentEnv(config: string): Record<string, string> {
  const tier = /kubernetes\/collector\/config\/(?<tier>[\w-]+)\.yaml$/.exec(config)?.groups?.tier;
  if (tier === undefined) return {};
  const env: Record<string, string> = {};
  const text = readFileSync(join(ROOT, `deploy/kubernetes/collector/${tier}.yaml`), 'utf8');
  for (const document of text.split(/^---$/m)) {
    const manifest = parse(document) as {
      kind?: string;
      spec?: {
        template?: { spec?: { containers?: { env?: { name: string; value?: string }[] }[] } };
      };
    } | null;
    if (manifest?.kind !== 'Deployment') continue;
    for (const container of manifest.spec?.template?.spec?.containers ?? []) {
      for (const variable of container.env ?? []) {
        if (variable.value !== undefined) env[variable.name] = variable.value;
      }
    }
  }
  return env;
}

describe('otelcol validate', () => {
  for (const config of COLLECTOR_CONFIGS) {
    it(`accepts ${config} with the Collector built from the manifest`, async () => {
      const { code, output } = await validateCollectorConfig(
        collector,
        join(ROOT, config),
        deploymentEnv(config),
      );
      expect(output).toBe('');
      expect(code).toBe(0);
    });
  }

  describe('is a real check', () => {
    const folder = mkdtempSync(join(tmpdir(), 'tooltrace-validate-'));
    afterAll(() => rmSync(folder, { recursive: true, force: true }));

    it('refuses a masking statement the OTTL parser cannot read, naming it', async () => {
      const broken = readFileSync(join(ROOT, 'otel-collector-config.yaml'), 'utf8').replace(
        'replace_all_patterns(attributes, "value", "sk-',
        'replace_all_patterns(attributes, "value" "sk-',
      );
      const file = join(folder, 'broken-ottl.yaml');
      writeFileSync(file, broken);
      const { code, output } = await validateCollectorConfig(collector, file);
      expect(code).not.toBe(0);
      expect(output).toContain('transform/mask-credentials');
    });

    it('refuses a load-balancing port written as a number (what otel-agent.yaml had)', async () => {
      const file = join(folder, 'numeric-port.yaml');
      writeFileSync(
        file,
        readFileSync(
          join(ROOT, 'deploy/kubernetes/collector/config/otel-agent.yaml'),
          'utf8',
        ).replace(/port: '4317'.*$/m, 'port: 4317'),
      );
      const { code, output } = await validateCollectorConfig(collector, file);
      expect(code).not.toBe(0);
      expect(output).toContain("'port' expected type 'string'");
    });
  });
});
