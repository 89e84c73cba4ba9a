import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../demo/cli-process.js';

const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { types?: string }>;
  peerDependencies: Record<string, string>;
};

/** What a user's project may be missing: only the peers and Node's own types may be named. */
const ALLOWED = new Set(Object.keys(packageJson.peerDependencies));

const SPECIFIER = /(?:import|export)\s[^'"]*?from\s+'([^']+)'|import\('([^']+)'\)/g;

/** Package names (`@scope/name` or `name`) that the declaration closure of `entry` imports. */
function packagesNamedFrom(entry: string): Map<string, string> {
  const named = new Map<string, string>();
  const seen = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(SPECIFIER)) {
      const specifier = (match[1] ?? match[2])!;
      if (specifier.startsWith('.')) {
        const next = resolve(dirname(file), specifier.replace(/\.js$/, '.d.ts'));
        if (existsSync(next)) pending.push(next);
        continue;
      }
      if (specifier.startsWith('node:')) continue;
      const parts = specifier.split('/');
      const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
      if (!named.has(name)) named.set(name, relative(ROOT, file));
    }
  }
  return named;
}

describe('the published declarations', () => {
  // `npm install tooltrace @opentelemetry/api` must type-check without skipLibCheck: a type from
  // the bundled SDK named in a .d.ts an entry reaches fails in the user's project, not here.
  const entries = Object.entries(packageJson.exports).flatMap(([name, target]) =>
    typeof target === 'object' && target.types ? [[name, target.types] as const] : [],
  );

  it.each(entries)('%s names no package beyond the peers', (_name, types) => {
    const named = packagesNamedFrom(join(ROOT, types));
    const outside = [...named].filter(([name]) => !ALLOWED.has(name));
    expect(outside).toEqual([]);
  });

  it('./mcp names neither MCP SDK line, so a project with one line alone type-checks', () => {
    const named = packagesNamedFrom(join(ROOT, 'dist/mcp/index.d.ts'));
    const sdks = [...named].filter(([name]) => name.startsWith('@modelcontextprotocol/'));
    expect(sdks).toEqual([]);
  });

  it('finds the peers it does name, so the walk reads the files', () => {
    const named = packagesNamedFrom(join(ROOT, 'dist/otel/index.d.ts'));
    expect(named.has('@opentelemetry/api')).toBe(true);
  });
});
