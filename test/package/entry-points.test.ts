import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../demo/cli-process.js';

const run = promisify(execFile);

/**
 * The `@opentelemetry/*` packages that importing `specifier` loads, in a fresh `node` process
 * resolving the package by name through its `exports` map (the built `dist`). Every
 * OpenTelemetry package is CommonJS on Node, so each one loaded is in `require.cache`.
 */
async function openTelemetryLoadedBy(specifier: string): Promise<string[]> {
  const script = `
    import { createRequire } from 'node:module';
    import { sep } from 'node:path';
    await import(${JSON.stringify(specifier)});
    const loaded = new Set();
    for (const path of Object.keys(createRequire(import.meta.url).cache)) {
      const parts = path.split(sep);
      const at = parts.lastIndexOf('@opentelemetry');
      if (at > 0 && parts[at - 1] === 'node_modules') loaded.add('@opentelemetry/' + parts[at + 1]);
    }
    process.stdout.write(JSON.stringify([...loaded].sort()));
  `;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
  });
  return JSON.parse(stdout) as string[];
}

describe('package entry points', () => {
  it('tooltrace loads no OpenTelemetry package', async () => {
    expect(await openTelemetryLoadedBy('tooltrace')).toEqual([]);
  });

  it('tooltrace/forward loads no OpenTelemetry package', async () => {
    // Problems go to its onError option (stderr by default), not to the API's diag.
    expect(await openTelemetryLoadedBy('tooltrace/forward')).toEqual([]);
  });

  it('tooltrace/otel loads the OpenTelemetry API and nothing else of OpenTelemetry', async () => {
    expect(await openTelemetryLoadedBy('tooltrace/otel')).toEqual(['@opentelemetry/api']);
  });

  it('tooltrace/testing loads no OpenTelemetry package', async () => {
    expect(await openTelemetryLoadedBy('tooltrace/testing')).toEqual([]);
  });

  it('tooltrace/sidecar loads the OpenTelemetry API and nothing else: the SDK is in its bundle', async () => {
    expect(await openTelemetryLoadedBy('tooltrace/sidecar')).toEqual(['@opentelemetry/api']);
  });
});
