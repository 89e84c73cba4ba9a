import { ConfigurationError } from '../../errors/index.js';

/** The exporters `OTEL_TRACES_EXPORTER` and `OTEL_METRICS_EXPORTER` may name here. */
export const ACCEPTED_EXPORTERS = ['otlp', 'console', 'none'] as const;

/** One of {@link ACCEPTED_EXPORTERS}, `none` aside: where a signal goes. */
export type ExporterName = 'otlp' | 'console';

/** Where the spans and the metrics go, from {@link resolveExporterSelection}. */
export interface ExporterSelection {
  /** Span exporters, each at most once: OTLP, standard output. */
  readonly traces: ReadonlySet<ExporterName>;
  /** Also write the spans to this file as OTLP JSON lines (`--out`, `TOOLTRACE_OUT`). */
  readonly outFile: string | undefined;
  /** Metric exporters, each at most once. */
  readonly metrics: ReadonlySet<ExporterName>;
  /** `OTEL_SDK_DISABLED=true`: nothing is exported, whatever else says so. */
  readonly sdkDisabled: boolean;
  /** What to say at start-up about a setting that was read in an unusual way (once each). */
  readonly notices: readonly string[];
}

/** What the command line adds to the variables. */
export interface ExporterSelectionOverrides {
  /** `--out FILE`; else `TOOLTRACE_OUT`. */
  out?: string | undefined;
  /** An OTLP endpoint was given as a flag: with `--out`, OTLP is wanted too. */
  otlpEndpointFlag?: boolean;
  /** The command a refusal names (`… is not an exporter the demo supports`). @default 'sidecar' */
  command?: 'sidecar' | 'demo';
}

/**
 * Reads the OpenTelemetry exporter-selection variables as the specification defines them
 * (`otlp` the default; a comma-separated list, which the specification allows implementations
 * to accept, for several at once; `none` for no exporter; case and blanks ignored; an empty
 * value the same as unset) and `OTEL_SDK_DISABLED` (`true`, in any case, turns every signal into
 * a no-op; anything but `true`, `false` or empty is read as `false`, and said). Two choices of
 * tooltrace's own, documented in the README: a value the sidecar does not support (`zipkin`, a
 * typo, the deprecated `logging`) is refused, naming the accepted ones, where the specification
 * lets an SDK warn and carry on — a sidecar that quietly exported somewhere else would lose
 * every span; and `--out` without `OTEL_TRACES_EXPORTER` writes only the file, the way to look
 * without a collector, unless an endpoint was set explicitly (`--otlp-endpoint`,
 * `OTEL_EXPORTER_OTLP_ENDPOINT` or its traces variant): then both, said in a notice. Unset, `OTEL_METRICS_EXPORTER` follows the
 * spans: OTLP when they go over OTLP, none otherwise (a console or file run would wait for a
 * collector that is not there only to send metrics). Throws a {@link ConfigurationError} naming
 * the variable.
 */
export function resolveExporterSelection(
  env: NodeJS.ProcessEnv,
  overrides: ExporterSelectionOverrides = {},
): ExporterSelection {
  const notices: string[] = [];
  const disabledText = env.OTEL_SDK_DISABLED?.trim() ?? '';
  const sdkDisabled = disabledText.toLowerCase() === 'true';
  if (!sdkDisabled && disabledText !== '' && disabledText.toLowerCase() !== 'false') {
    notices.push(
      `OTEL_SDK_DISABLED='${disabledText}' is neither true nor false: read as false (the SDK stays on)`,
    );
  }
  const outText = overrides.out ?? env.TOOLTRACE_OUT;
  if (outText !== undefined && outText.trim() === '' && overrides.out !== undefined) {
    throw new ConfigurationError('--out needs a file to write, got an empty one', {
      setting: '--out',
    });
  }
  const outFile = outText === undefined || outText.trim() === '' ? undefined : outText;
  const command = overrides.command ?? 'sidecar';
  const tracesListed = exporterList(env, 'OTEL_TRACES_EXPORTER', command);
  const endpointVariable = ENDPOINT_VARIABLES.find((name) => (env[name]?.trim() ?? '') !== '');
  const traces =
    tracesListed ??
    new Set<ExporterName>(
      outFile === undefined || overrides.otlpEndpointFlag === true || endpointVariable !== undefined
        ? ['otlp']
        : [],
    );
  // The demo's first line names every place its spans go: no notice needed there.
  if (
    command === 'sidecar' &&
    tracesListed === undefined &&
    outFile !== undefined &&
    overrides.otlpEndpointFlag !== true &&
    endpointVariable !== undefined
  ) {
    notices.push(
      `--out with ${endpointVariable} set: spans go to both (OTEL_TRACES_EXPORTER=none writes only the file)`,
    );
  }
  const metrics =
    exporterList(env, 'OTEL_METRICS_EXPORTER', command) ??
    new Set<ExporterName>(traces.has('otlp') ? ['otlp'] : []);
  if (overrides.otlpEndpointFlag === true && !traces.has('otlp') && !metrics.has('otlp')) {
    notices.push(
      `--otlp-endpoint is not used: OTEL_TRACES_EXPORTER=${describeExporters(traces)} sends nothing over OTLP`,
    );
  }
  if (sdkDisabled) {
    if (outFile !== undefined) {
      notices.push(`OTEL_SDK_DISABLED=true: ${outFile} is not written (--out, TOOLTRACE_OUT)`);
    }
    return {
      traces: new Set(),
      outFile: undefined,
      metrics: new Set(),
      sdkDisabled,
      notices,
    };
  }
  return { traces, outFile, metrics, sdkDisabled, notices };
}

/** The variables that name an OTLP endpoint for spans: either set asks for OTLP beside `--out`. */
const ENDPOINT_VARIABLES = ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT'];

/** The exporters `name` lists, or `undefined` when it is unset or empty. */
function exporterList(
  env: NodeJS.ProcessEnv,
  name: string,
  command: string,
): Set<ExporterName> | undefined {
  const text = env[name];
  if (text === undefined || text.trim() === '') return undefined;
  const names = text
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== '');
  const accepted = `accepted: ${ACCEPTED_EXPORTERS.join(', ')}, or a comma-separated list such as otlp,console`;
  for (const part of names) {
    if (!(ACCEPTED_EXPORTERS as readonly string[]).includes(part)) {
      const hint = part === 'logging' ? ` ('logging' is the deprecated name of 'console')` : '';
      throw new ConfigurationError(
        `${name}: '${part}' is not an exporter the ${command} supports${hint}; ${accepted}`,
        { setting: name },
      );
    }
  }
  if (names.includes('none')) {
    if (names.some((part) => part !== 'none')) {
      throw new ConfigurationError(
        `${name}: 'none' cannot be combined with other exporters, got '${text.trim()}'; ${accepted}`,
        { setting: name },
      );
    }
    return new Set();
  }
  return new Set(names as ExporterName[]);
}

/** `otlp, console` for a start-up line; `none` for no exporter. */
export function describeExporters(exporters: ReadonlySet<ExporterName>): string {
  return exporters.size === 0 ? 'none' : [...exporters].join(', ');
}
