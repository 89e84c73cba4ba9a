import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/errors/index.js';
import { resolveExporterSelection } from '../../../src/sidecar/export/index.js';

const names = (set: ReadonlySet<string>): string[] => [...set];

describe('resolveExporterSelection()', () => {
  it('exports spans and metrics over OTLP when nothing is set, an empty value read as unset', () => {
    for (const env of [{}, { OTEL_TRACES_EXPORTER: ' ', OTEL_METRICS_EXPORTER: '' }]) {
      const selection = resolveExporterSelection(env);
      expect(names(selection.traces)).toEqual(['otlp']);
      expect(names(selection.metrics)).toEqual(['otlp']);
      expect(selection.outFile).toBeUndefined();
      expect(selection.sdkDisabled).toBe(false);
    }
  });

  it('takes comma-separated lists in any case, blanks and repeats ignored', () => {
    const selection = resolveExporterSelection({
      OTEL_TRACES_EXPORTER: ' Console , otlp,,console',
      OTEL_METRICS_EXPORTER: 'CONSOLE',
    });
    expect(names(selection.traces)).toEqual(['console', 'otlp']);
    expect(names(selection.metrics)).toEqual(['console']);
  });

  it('reads none as no exporter, and metrics follow the spans when unset', () => {
    const none = resolveExporterSelection({ OTEL_TRACES_EXPORTER: 'none' });
    expect(names(none.traces)).toEqual([]);
    // No span goes over OTLP: metrics would only wait for a collector that is not there.
    expect(names(none.metrics)).toEqual([]);
    const console = resolveExporterSelection({ OTEL_TRACES_EXPORTER: 'console' });
    expect(names(console.metrics)).toEqual([]);
    const both = resolveExporterSelection({ OTEL_TRACES_EXPORTER: 'console,otlp' });
    expect(names(both.metrics)).toEqual(['otlp']);
    const chosen = resolveExporterSelection({
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_METRICS_EXPORTER: 'otlp',
    });
    expect(names(chosen.metrics)).toEqual(['otlp']);
  });

  it('writes only the --out file unless OTLP is asked for or an endpoint is set', () => {
    const alone = resolveExporterSelection({}, { out: 'spans.jsonl' });
    expect(alone.outFile).toBe('spans.jsonl');
    expect(names(alone.traces)).toEqual([]);
    expect(names(alone.metrics)).toEqual([]);
    expect(
      names(resolveExporterSelection({}, { out: 'spans.jsonl', otlpEndpointFlag: true }).traces),
    ).toEqual(['otlp']);
    expect(
      names(resolveExporterSelection({ OTEL_TRACES_EXPORTER: 'otlp' }, { out: 'f' }).traces),
    ).toEqual(['otlp']);
    const endpointSet = resolveExporterSelection(
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' },
      { out: 'f' },
    );
    expect(names(endpointSet.traces)).toEqual(['otlp']);
    expect(endpointSet.notices).toEqual([
      '--out with OTEL_EXPORTER_OTLP_ENDPOINT set: spans go to both (OTEL_TRACES_EXPORTER=none writes only the file)',
    ]);
    expect(
      names(
        resolveExporterSelection(
          { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' },
          { out: 'f' },
        ).traces,
      ),
    ).toEqual([]);
    expect(
      resolveExporterSelection({ OTEL_TRACES_EXPORTER: 'console' }, { otlpEndpointFlag: true })
        .notices,
    ).toEqual([
      '--otlp-endpoint is not used: OTEL_TRACES_EXPORTER=console sends nothing over OTLP',
    ]);
    expect(resolveExporterSelection({ TOOLTRACE_OUT: 'env.jsonl' }).outFile).toBe('env.jsonl');
    expect(
      resolveExporterSelection({ TOOLTRACE_OUT: 'env.jsonl' }, { out: 'flag.jsonl' }).outFile,
    ).toBe('flag.jsonl');
    expect(() => resolveExporterSelection({}, { out: ' ' })).toThrow(/--out needs a file/);
  });

  it('refuses an exporter it does not have, naming it and the accepted ones', () => {
    const refusal = (env: NodeJS.ProcessEnv): ConfigurationError => {
      try {
        resolveExporterSelection(env);
      } catch (error) {
        return error as ConfigurationError;
      }
      throw new Error('not refused');
    };
    const zipkin = refusal({ OTEL_TRACES_EXPORTER: 'otlp,zipkin' });
    expect(zipkin).toBeInstanceOf(ConfigurationError);
    expect(zipkin.setting).toBe('OTEL_TRACES_EXPORTER');
    expect(zipkin.message).toBe(
      "OTEL_TRACES_EXPORTER: 'zipkin' is not an exporter the sidecar supports; accepted: otlp, console, none, or a comma-separated list such as otlp,console",
    );
    expect(refusal({ OTEL_METRICS_EXPORTER: 'prometheus' }).setting).toBe('OTEL_METRICS_EXPORTER');
    expect(refusal({ OTEL_TRACES_EXPORTER: 'logging' }).message).toContain(
      "'logging' is the deprecated name of 'console'",
    );
    expect(refusal({ OTEL_TRACES_EXPORTER: 'none,console' }).message).toContain(
      "'none' cannot be combined with other exporters",
    );
  });

  it('exports nothing with OTEL_SDK_DISABLED=true in any case, and says what it leaves out', () => {
    const disabled = resolveExporterSelection(
      { OTEL_SDK_DISABLED: 'TRUE', OTEL_TRACES_EXPORTER: 'console', OTEL_METRICS_EXPORTER: 'otlp' },
      { out: 'spans.jsonl' },
    );
    expect(disabled.sdkDisabled).toBe(true);
    expect(names(disabled.traces)).toEqual([]);
    expect(names(disabled.metrics)).toEqual([]);
    expect(disabled.outFile).toBeUndefined();
    expect(disabled.notices).toEqual([
      'OTEL_SDK_DISABLED=true: spans.jsonl is not written (--out, TOOLTRACE_OUT)',
    ]);
    // Only "true" is true; anything else but false or empty is read as false, and said.
    const odd = resolveExporterSelection({ OTEL_SDK_DISABLED: 'yes' });
    expect(odd.sdkDisabled).toBe(false);
    expect(names(odd.traces)).toEqual(['otlp']);
    expect(odd.notices).toEqual([
      "OTEL_SDK_DISABLED='yes' is neither true nor false: read as false (the SDK stays on)",
    ]);
    expect(resolveExporterSelection({ OTEL_SDK_DISABLED: 'false' }).notices).toEqual([]);
  });
});
