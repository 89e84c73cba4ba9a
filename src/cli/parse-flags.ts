import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigurationError } from '../errors/index.js';
import type { TraceBy } from '../otel/index.js';

/** What `parseArgs` returns for `config`, as `parseArgs` types it. */
type Parsed<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>>;

/**
 * `parseArgs` (strict, its default) for subcommand `command`, whose errors become one line a user can act
 * on: which flag was wrong and what is accepted, as a {@link ConfigurationError} (the CLI prints
 * its message and exits 2, no stack trace) instead of Node's advice about positional arguments.
 * The command's `usage` text names the values flags take (`--out FILE`).
 */
export function parseFlags<T extends ParseArgsConfig>(
  command: string,
  usage: string,
  config: T,
): Parsed<T> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new ConfigurationError(describeFlagError(command, usage, config, error as Error), {
      setting: command,
      cause: error,
    });
  }
}

const TRACE_BY: readonly string[] = ['causal-root', 'session', 'call'] satisfies TraceBy[];

/** `--trace-by`'s value, as `tooltrace sidecar` and `tooltrace view` take it. */
export function traceByFlag(text: string | undefined): TraceBy | undefined {
  if (text === undefined || TRACE_BY.includes(text)) return text as TraceBy | undefined;
  throw new ConfigurationError(`--trace-by must be causal-root, session or call, got '${text}'`, {
    setting: '--trace-by',
  });
}

/** One line for a `parseArgs` error: the flag (or argument), and what would be accepted. */
function describeFlagError(
  command: string,
  usage: string,
  config: ParseArgsConfig,
  error: Error,
): string {
  const code = (error as { code?: unknown }).code;
  const named = /'(-{1,2}[^' ]*)/.exec(error.message)?.[1] ?? '';
  const flag = named.replace(/=.*$/, '');
  const options = config.options ?? {};
  const accepted = Object.entries(options)
    .map(([name, option]) => {
      if (option.type !== 'string') return `--${name}`;
      const value = new RegExp(`--${name} ([A-Z][A-Z:=_]*)`).exec(usage)?.[1] ?? 'VALUE';
      return `--${name} ${value}`;
    })
    .join(', ');
  const help = `(tooltrace ${command} --help)`;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    return `unknown flag ${flag}; accepted: ${accepted}`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const option = options[flag.replace(/^-+/, '')];
    if (option?.type === 'boolean') return `${flag} takes no value ${help}`;
    // `--shutdown-timeout -1s`: parseArgs reads the value as a flag of its own.
    const args = config.args ?? [];
    const next = args[args.indexOf(flag) + 1];
    if (next?.startsWith('-') === true && !/^--?[a-z]/i.test(next)) {
      return `${flag} needs a value; '${next}' was taken for a flag (write ${flag}=${next}) ${help}`;
    }
    return `${flag} needs a value ${help}`;
  }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const argument = /'([^']*)'/.exec(error.message)?.[1] ?? '';
    return `unexpected argument '${argument}' ${help}`;
  }
  return `${error.message} ${help}`;
}
