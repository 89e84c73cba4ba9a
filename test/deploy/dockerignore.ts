/** The patterns of a `.dockerignore` file, comments and blank lines dropped, in order. */
export function parseDockerignore(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/**
 * Whether Docker leaves a context path (forward slashes, relative to the context) out of the
 * build context. A pattern matches the path or any directory above it; `*` and `?` stay within
 * one path segment, `**` spans several; `!pattern` re-includes; the last matching pattern wins.
 */
export function isDockerignored(path: string, patterns: readonly string[]): boolean {
  const normalized = path.replace(/^\.\//, '').replace(/\/$/, '');
  const segments = normalized.split('/');
  const candidates = segments.map((_, index) => segments.slice(0, index + 1).join('/'));
  let ignored = false;
  for (const pattern of patterns) {
    const negated = pattern.startsWith('!');
    const body = (negated ? pattern.slice(1) : pattern).replace(/^\.?\//, '').replace(/\/$/, '');
    const expression = globToRegExp(body);
    if (candidates.some((candidate) => expression.test(candidate))) ignored = !negated;
  }
  return ignored;
}

function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let index = 0; index < glob.length; index += 1) {
    const character = glob[index]!;
    if (character === '*' && glob[index + 1] === '*') {
      index += 1;
      if (glob[index + 1] === '/') {
        source += '(?:.*/)?';
        index += 1;
      } else source += '.*';
    } else if (character === '*') source += '[^/]*';
    else if (character === '?') source += '[^/]';
    else source += character.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}
