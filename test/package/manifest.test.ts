import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../demo/cli-process.js';

/** The package.json that `npm pack` puts in the tarball users install. */
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  scripts: Record<string, string>;
};

describe('package.json', () => {
  it('has no script npm runs when the package is installed, so installing the tarball warns of none', () => {
    // npm 11 lists a dependency's preinstall, install, postinstall and prepare scripts as
    // "install scripts not yet covered by allowScripts" on every install of the tarball; building
    // belongs to development (`npm run build`, which `npm test` runs first).
    const lifecycle = [
      'preinstall',
      'install',
      'postinstall',
      'prepare',
      'preprepare',
      'postprepare',
    ];
    expect(Object.keys(manifest.scripts).filter((name) => lifecycle.includes(name))).toEqual([]);
  });

  it("leaves the tarball `npm pack` writes out of git's untracked files", () => {
    const name = `${manifest.name}-${manifest.version}.tgz`;
    // `git check-ignore` prints the path and exits 0 when a rule ignores it (it throws otherwise).
    expect(execFileSync('git', ['check-ignore', name], { cwd: ROOT, encoding: 'utf8' })).toBe(
      `${name}\n`,
    );
  });
});
