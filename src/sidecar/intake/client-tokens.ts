import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ConfigurationError } from '../../errors/index.js';

/** A bearer token and the name of the client that holds it. */
export interface ClientToken {
  /** Letters, digits, `_`, `.` and `-`: it becomes `tooltrace.client` and a metric label. */
  name: string;
  secret: string;
}

/** The name of a token given without one (`--token SECRET`, `TOOLTRACE_TOKEN=SECRET`). */
export const DEFAULT_CLIENT = 'default';

const NAMED = /^([A-Za-z0-9_.-]{1,64})=(.+)$/;

/**
 * Parses a token as given on the command line: `NAME=SECRET`, or a bare `SECRET` named
 * {@link DEFAULT_CLIENT}. A secret that itself holds `=` must be given with a name. `where`
 * names the flag or file line for the error.
 */
export function parseClientToken(text: string, where: string): ClientToken {
  const trimmed = text.trim();
  const match = NAMED.exec(trimmed);
  const token =
    match === null
      ? { name: DEFAULT_CLIENT, secret: trimmed }
      : {
          name: match[1]!,
          secret: match[2]!.trim(),
        };
  if (token.secret === '') {
    throw new ConfigurationError(`${where}: the token is empty`, { setting: '--token' });
  }
  return token;
}

/**
 * Parses a token file: one `NAME=SECRET` a line; blank lines and lines starting with `#` are
 * skipped. A line without a name is an error naming its number (its secret is not shown).
 */
export function parseTokenFile(text: string, path: string): ClientToken[] {
  const tokens: ClientToken[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    if (!NAMED.test(trimmed)) {
      throw new ConfigurationError(
        `--token-file ${path} line ${index + 1}: expected NAME=SECRET (NAME of letters, digits, _ . -)`,
        { setting: '--token-file' },
      );
    }
    tokens.push(parseClientToken(trimmed, `--token-file ${path} line ${index + 1}`));
  });
  return tokens;
}

/**
 * The bearer tokens the HTTP intake accepts, each naming a client: from `--token` (fixed) and
 * `--token-file` (read at start-up and again by {@link reload}, on SIGHUP). Names and secrets
 * are unique. A token is looked up by the SHA-256 of the secret presented, so the lookup's
 * timing says nothing about any secret.
 */
export class ClientTokens {
  readonly #fixed: readonly ClientToken[];
  readonly #file: string | undefined;
  #byDigest = new Map<string, string>();

  private constructor(fixed: readonly ClientToken[], file: string | undefined) {
    this.#fixed = fixed;
    this.#file = file;
  }

  /** Reads the token file (when given) and checks every token; throws a `ConfigurationError`. */
  static async load(fixed: readonly ClientToken[], file?: string): Promise<ClientTokens> {
    const tokens = new ClientTokens(fixed, file);
    await tokens.reload();
    return tokens;
  }

  /** How many tokens are accepted now. */
  get size(): number {
    return this.#byDigest.size;
  }

  /** Whether a token is required at all: one was given, or a token file (even an empty one). */
  get required(): boolean {
    return this.#fixed.length > 0 || this.#file !== undefined;
  }

  /** The client a presented secret belongs to, or `undefined`. */
  clientOf(secret: string): string | undefined {
    return this.#byDigest.get(digest(secret));
  }

  /**
   * Reads the token file again and swaps the set at once; on any error the set in use stays and
   * the `ConfigurationError` is thrown. Resolves with the number of tokens now accepted.
   */
  async reload(): Promise<number> {
    let fromFile: ClientToken[] = [];
    if (this.#file !== undefined) {
      let text: string;
      try {
        text = await readFile(this.#file, 'utf8');
      } catch (error) {
        throw new ConfigurationError(
          `--token-file ${this.#file} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
          { setting: '--token-file', cause: error },
        );
      }
      fromFile = parseTokenFile(text, this.#file);
    }
    const byDigest = new Map<string, string>();
    const names = new Set<string>();
    for (const token of [...this.#fixed, ...fromFile]) {
      if (names.has(token.name)) {
        throw new ConfigurationError(
          `two tokens are named '${token.name}': give each client its own name (NAME=SECRET)`,
          { setting: '--token' },
        );
      }
      const key = digest(token.secret);
      if (byDigest.has(key)) {
        throw new ConfigurationError(
          `tokens '${byDigest.get(key)!}' and '${token.name}' have the same secret`,
          { setting: '--token' },
        );
      }
      names.add(token.name);
      byDigest.set(key, token.name);
    }
    this.#byDigest = byDigest;
    return byDigest.size;
  }
}

function digest(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
