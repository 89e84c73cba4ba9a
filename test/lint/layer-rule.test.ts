import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../demo/cli-process.js';

let eslint: ESLint;

/** The messages the layer rule gives `code` placed at `filePath` (relative to the root). */
async function layerProblems(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((message) => message.message);
}

describe('the layer rule (eslint.config.js)', () => {
  beforeAll(async () => {
    const configUrl = new URL('../../eslint.config.js', import.meta.url).href;
    const { layerRules } = (await import(configUrl)) as { layerRules: Linter.Config[] };
    eslint = new ESLint({
      cwd: ROOT,
      overrideConfigFile: true,
      overrideConfig: [{ languageOptions: { parser: tseslint.parser } }, ...layerRules],
    });
  });

  it('fails an import against the direction of the layers', async () => {
    expect(
      await layerProblems(
        'src/bus/new-file.ts',
        "import { traceToolCalls } from '../otel/index.js';",
      ),
    ).toEqual([expect.stringMatching(/src\/bus must not depend on src\/otel/)]);
    expect(
      await layerProblems(
        'src/otel/new-file.ts',
        "import { runSidecar } from '../sidecar/index.js';",
      ),
    ).toEqual([expect.stringMatching(/src\/otel must not depend on src\/sidecar/)]);
    expect(
      await layerProblems('src/forward/new-file.ts', "import { X } from '../streamtool/index.js';"),
    ).toEqual([expect.stringMatching(/src\/forward must not depend on src\/streamtool/)]);
  });

  it('holds the sidecar rooms to intake -> pipeline -> export', async () => {
    expect(
      await layerProblems(
        'src/sidecar/export/new-file.ts',
        "import { EventPipeline } from '../pipeline/index.js';",
      ),
    ).toEqual([
      expect.stringMatching(/src\/sidecar\/export must not depend on .*src\/sidecar\/pipeline/),
    ]);
    expect(
      await layerProblems(
        'src/sidecar/pipeline/new-file.ts',
        "import { Intakes } from '../intake/index.js';",
      ),
    ).toEqual([expect.stringMatching(/must not depend on src\/sidecar\/intake/)]);
    expect(
      await layerProblems(
        'src/sidecar/intake/new-file.ts',
        "import { runSidecar } from '../run-sidecar.js';",
      ),
    ).toEqual([expect.stringMatching(/the sidecar's composition/)]);
    expect(
      await layerProblems(
        'src/sidecar/intake/new-file.ts',
        "import { demo } from '../../demo/index.js';",
      ),
    ).toEqual([expect.stringMatching(/src\/sidecar\/intake must not depend on src\/demo/)]);
  });

  it('keeps OpenTelemetry out of the root layers and the SDK out of otel and forward', async () => {
    expect(
      await layerProblems('src/wire/new-file.ts', "import { trace } from '@opentelemetry/api';"),
    ).toEqual([expect.stringMatching(/never imports OpenTelemetry/)]);
    expect(
      await layerProblems(
        'src/otel/new-file.ts',
        "import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';",
      ),
    ).toEqual([
      expect.stringMatching(/tooltrace\/otel loads nothing of OpenTelemetry but the API/),
    ]);
    // The logs API is an optional peer: otel reaches it only through createRequire, when asked.
    expect(
      await layerProblems(
        'src/otel/new-file.ts',
        "import { logs } from '@opentelemetry/api-logs';",
      ),
    ).toEqual([
      expect.stringMatching(/tooltrace\/otel loads nothing of OpenTelemetry but the API/),
    ]);
    expect(
      await layerProblems('src/forward/new-file.ts', "import { diag } from '@opentelemetry/api';"),
    ).toEqual([expect.stringMatching(/tooltrace\/forward loads no OpenTelemetry package/)]);
  });

  it('keeps the adapters apart: from each other, the sidecar and otel, and OpenTelemetry but its API', async () => {
    expect(
      await layerProblems(
        'src/mcp/new-file.ts',
        "import { traceAiSdkTools } from '../ai-sdk/index.js';",
      ),
    ).toEqual([expect.stringMatching(/src\/mcp must not depend on src\/ai-sdk/)]);
    expect(
      await layerProblems('src/ai-sdk/new-file.ts', "import { mcpTools } from '../mcp/index.js';"),
    ).toEqual([expect.stringMatching(/src\/ai-sdk must not depend on src\/mcp/)]);
    expect(
      await layerProblems(
        'src/mcp/new-file.ts',
        "import { runSidecar } from '../sidecar/index.js';",
      ),
    ).toEqual([expect.stringMatching(/src\/mcp must not depend on src\/sidecar/)]);
    expect(
      await layerProblems(
        'src/ai-sdk/new-file.ts',
        "import { traceToolCalls } from '../otel/index.js';",
      ),
    ).toEqual([expect.stringMatching(/src\/ai-sdk must not depend on src\/otel/)]);
    expect(
      await layerProblems(
        'src/mcp/new-file.ts',
        "import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';",
      ),
    ).toEqual([expect.stringMatching(/The adapters load nothing of OpenTelemetry but the API/)]);
    expect(
      await layerProblems(
        'src/ai-sdk/new-file.ts',
        "import { context } from '@opentelemetry/api';\nimport { bridge } from '../streamtool/index.js';",
      ),
    ).toEqual([]);
  });

  it.each([
    [
      'src/sidecar/pipeline/new-file.ts',
      "import { ATTR_END_REASON } from '../../otel/attribute-names.js';",
      /src\/sidecar\/pipeline imports src\/otel only through otel\/index.js or otel\/internal.js/,
    ],
    [
      'src/cli/new-file.ts',
      "import { ToolCallTracer } from '../otel/tool-calls/tool-call-tracer.js';",
      /src\/cli imports src\/otel only through/,
    ],
    [
      'src/otel/agent/new-file.ts',
      "import { OpenCall } from '../tool-calls/open-call.js';",
      /src\/otel\/agent must not depend on src\/otel\/tool-calls/,
    ],
    [
      'src/otel/tool-calls/new-file.ts',
      "import { AgentSpan } from '../agent/agent-span.js';",
      /src\/otel\/tool-calls must not depend on src\/otel\/agent/,
    ],
    // The folder's own rule still holds in its rooms.
    [
      'src/otel/agent/new-file.ts',
      "import { runSidecar } from '../../sidecar/index.js';",
      /src\/otel must not depend on src\/sidecar/,
    ],
  ])(
    'keeps otel behind its barrels and its two rooms apart (%s)',
    async (filePath, code, message) => {
      expect(await layerProblems(filePath, code)).toEqual([expect.stringMatching(message)]);
    },
  );

  it('keeps otlp a room beside: on errors only, reached through its index', async () => {
    expect(
      await layerProblems(
        'src/otlp/new-file.ts',
        "import { startOtlpReceiver } from '../testing/index.js';",
      ),
    ).toEqual([expect.stringMatching(/src\/otlp must not depend on src\/testing/)]);
    expect(
      await layerProblems('src/otlp/new-file.ts', "import { callKey } from '../otel/internal.js';"),
    ).toEqual([expect.stringMatching(/src\/otlp must not depend on src\/otel/)]);
    expect(
      await layerProblems(
        'src/sidecar/export/new-file.ts',
        "import { ProtobufReader } from '../../otlp/protobuf-reader.js';",
      ),
    ).toEqual([
      expect.stringMatching(/src\/sidecar\/export imports src\/otlp only through otlp\/index.js/),
    ]);
    expect(
      await layerProblems(
        'src/sidecar/export/new-file.ts',
        "import { ProtobufReader } from '../../otlp/index.js';",
      ),
    ).toEqual([]);
    expect(
      await layerProblems(
        'src/testing/new-file.ts',
        "import { decodeTraceRequest } from '../otlp/index.js';",
      ),
    ).toEqual([]);
  });

  it.each([
    'src/demo/new-file.ts',
    'src/cli/new-file.ts',
    'src/view/new-file.ts',
    'src/sidecar/new-file.ts',
    'src/sidecar/export/new-file.ts',
    'src/otel/agent/new-file.ts',
    'src/otlp/new-file.ts',
    'src/mcp/new-file.ts',
  ])('refuses testing to product code (%s)', async (filePath) => {
    const up = '../'.repeat(filePath.split('/').length - 2);
    expect(
      await layerProblems(filePath, `import { startOtlpReceiver } from '${up}testing/index.js';`),
    ).toEqual([
      expect.stringMatching(/must not depend on src\/testing: product code never imports/),
    ]);
  });

  it('refuses testing to the files at the root of src', async () => {
    for (const filePath of ['src/cli.ts', 'src/index.ts']) {
      expect(
        await layerProblems(filePath, "import { startOtlpReceiver } from './testing/index.js';"),
      ).toEqual([expect.stringMatching(/src\/\*\.ts must not depend on src\/testing/)]);
    }
    expect(
      await layerProblems('src/index.ts', "import { trace } from '@opentelemetry/api';"),
    ).toEqual([expect.stringMatching(/never imports OpenTelemetry/)]);
  });

  it('lets view reach the sidecar through sidecar/pipeline/index.js only', async () => {
    for (const specifier of [
      '../sidecar/export/index.js',
      '../sidecar/export/key-value-list.js',
      '../sidecar/pipeline/event-pipeline.js',
      '../sidecar/pipeline/printable.js',
      '../sidecar/index.js',
      '../sidecar/run-sidecar.js',
      '../sidecar',
    ]) {
      expect(
        await layerProblems('src/view/new-file.ts', `import { x } from '${specifier}';`),
      ).toEqual([
        expect.stringMatching(
          /src\/view imports src\/sidecar only through sidecar\/pipeline\/index.js/,
        ),
      ]);
    }
    expect(
      await layerProblems(
        'src/view/new-file.ts',
        "import { traceSidecarBus, printable } from '../sidecar/pipeline/index.js';",
      ),
    ).toEqual([]);
    // Another folder named like it is not the sidecar.
    expect(
      await layerProblems('src/view/new-file.ts', "import { x } from './sidecar-like.js';"),
    ).toEqual([]);
  });

  it('lets the barrels and the shared core through', async () => {
    const barrels =
      "import { traceToolCalls } from '../otel/index.js';\nimport { callKey } from '../otel/internal.js';";
    expect(await layerProblems('src/sidecar/new-file.ts', barrels)).toEqual([]);
    const core =
      "import { SpanCore } from '../span-core.js';\nimport { EventBus } from '../../bus/index.js';";
    expect(await layerProblems('src/otel/tool-calls/new-file.ts', core)).toEqual([]);
  });

  it('lets the allowed directions through', async () => {
    expect(
      await layerProblems(
        'src/sidecar/intake/new-file.ts',
        "import { EventPipeline } from '../pipeline/index.js';\nimport { EventBus } from '../../bus/index.js';",
      ),
    ).toEqual([]);
    expect(
      await layerProblems(
        'src/otel/new-file.ts',
        "import { trace } from '@opentelemetry/api';\nimport { EventBus } from '../bus/index.js';",
      ),
    ).toEqual([]);
    expect(
      await layerProblems(
        'src/forward/new-file.ts',
        "import { encodeEnvelope } from '../wire/index.js';",
      ),
    ).toEqual([]);
  });
});
