import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/** The repository root (this file lives in test/deploy). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A repository path (forward slashes, relative to the root) as an absolute path on this machine. */
export function repoPath(path: string): string {
  return join(REPO_ROOT, ...path.split('/'));
}

/** Whether a file or directory exists at a repository path. */
export function repoFileExists(path: string): boolean {
  return existsSync(repoPath(path));
}

/** The text of a repository file. */
export function readRepoText(path: string): string {
  return readFileSync(repoPath(path), 'utf8');
}

/** A repository YAML file, parsed; `unknown` because nothing about its shape is trusted yet. */
export function readRepoYaml(path: string): unknown {
  const document: unknown = parse(readRepoText(path));
  return document;
}

/** A repository JSON file, parsed. */
export function readRepoJson(path: string): unknown {
  const document: unknown = JSON.parse(readRepoText(path));
  return document;
}

/**
 * Every file under a repository path (the path itself when it is a file), as repository paths
 * with forward slashes. `node_modules` directories are not entered.
 */
export function listRepoFiles(path: string): string[] {
  const absolute = repoPath(path);
  if (!existsSync(absolute)) return [];
  if (!statSync(absolute).isDirectory()) return [path];
  const files: string[] = [];
  const walk = (directory: string): void => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const child = join(directory, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(child);
      } else {
        files.push(relative(REPO_ROOT, child).split(sep).join(posix.sep));
      }
    }
  };
  walk(absolute);
  return files.sort();
}
