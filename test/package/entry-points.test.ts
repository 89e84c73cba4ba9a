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

/**
 * The adapter SDKs (`@modelcontextprotocol/sdk`, `ai`, `@langchain/core`, `@langchain/langgraph`)
 * that importing `specifier` loads, through
 * either module system: a module hook (on its own thread) reports every ES module loaded, and
 * `require.cache` holds the CommonJS ones.
 */
async function adapterSdksLoadedBy(specifier: string): Promise<string[]> {
  const hooks = `
    let port;
    export function initialize(data) { port = data.port; }
    export async function load(url, context, nextLoad) {
      port.postMessage(url);
      return nextLoad(url, context);
    }
  `;
  const script = `
    const SDKS = ['@modelcontextprotocol/sdk', 'ai', '@langchain/core', '@langchain/langgraph'];
    import { createRequire, register } from 'node:module';
    import { sep } from 'node:path';
    import { MessageChannel } from 'node:worker_threads';
    const { port1, port2 } = new MessageChannel();
    const urls = [];
    const END = 'data:text/javascript,export default 0';
    const ended = new Promise((resolve) => port1.on('message', (url) => url === END ? resolve() : urls.push(url)));
    register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}), import.meta.url, {
      data: { port: port2 },
      transferList: [port2],
    });
    await import(${JSON.stringify(specifier)});
    await import(END); // messages arrive in order: once this one is in, every earlier one is
    await ended;
    port1.close();
    const paths = [...urls, ...Object.keys(createRequire(import.meta.url).cache)];
    const loaded = new Set();
    for (const path of paths) {
      const parts = path.replaceAll(sep, '/').split('/');
      const at = parts.lastIndexOf('node_modules');
      if (at < 0) continue;
      const scoped = parts[at + 1].startsWith('@');
      const name = scoped ? parts[at + 1] + '/' + parts[at + 2] : parts[at + 1];
      if (SDKS.includes(name)) loaded.add(name);
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

  it('tooltrace/mcp loads the OpenTelemetry API and neither adapter SDK (it uses the Client or McpServer it is given)', async () => {
    expect(await openTelemetryLoadedBy('tooltrace/mcp')).toEqual(['@opentelemetry/api']);
    expect(await adapterSdksLoadedBy('tooltrace/mcp')).toEqual([]);
  });

  it('tooltrace/ai-sdk loads no OpenTelemetry package and neither adapter SDK (it wraps the tools it is given)', async () => {
    expect(await openTelemetryLoadedBy('tooltrace/ai-sdk')).toEqual([]);
    expect(await adapterSdksLoadedBy('tooltrace/ai-sdk')).toEqual([]);
  });

  it('tooltrace/langchain loads no OpenTelemetry package and of the adapter SDKs @langchain/core only (for its callback base class)', async () => {
    expect(await openTelemetryLoadedBy('tooltrace/langchain')).toEqual([]);
    expect(await adapterSdksLoadedBy('tooltrace/langchain')).toEqual(['@langchain/core']);
  });

  it('tooltrace and tooltrace/otel load neither adapter SDK', async () => {
    expect(await adapterSdksLoadedBy('tooltrace')).toEqual([]);
    expect(await adapterSdksLoadedBy('tooltrace/otel')).toEqual([]);
  });

  it('the check sees an adapter SDK when one is loaded', async () => {
    expect(await adapterSdksLoadedBy('@modelcontextprotocol/sdk/client/index.js')).toEqual([
      '@modelcontextprotocol/sdk',
    ]);
    expect(await adapterSdksLoadedBy('ai')).toEqual(['ai']);
  });

  it('tooltrace/testing loads no OpenTelemetry package', async () => {
    expect(await openTelemetryLoadedBy('tooltrace/testing')).toEqual([]);
  });

  it('tooltrace/sidecar loads the OpenTelemetry API and nothing else: the SDK is in its bundle', async () => {
    expect(await openTelemetryLoadedBy('tooltrace/sidecar')).toEqual(['@opentelemetry/api']);
  });
});
