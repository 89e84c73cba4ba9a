import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Dependencies point one way: bus <- streamtool <- otel <- sidecar <- view <- cli/demo, with wire,
 * forward, otlp (OTLP read and written, under sidecar export, testing and the view) and the
 * adapters (mcp, ai-sdk, langchain) beside. Each folder of `src` lists the folders it may import from; every other one is
 * forbidden. Inside the sidecar, intake -> pipeline -> export: intake talks to the pipeline
 * only, the pipeline may use export, export neither; no room imports the composition at
 * `src/sidecar/*.ts`. `testing` (the fakes the package ships) imports product code and no
 * product code imports it: no folder but `testing` may list it.
 */
const mayImport = {
  errors: [],
  // Third-party code the build bundles into the package (no runtime dependencies).
  vendor: [],
  bus: ['errors'],
  events: ['bus', 'errors'],
  streamtool: ['bus', 'events', 'errors'],
  wire: ['bus', 'events', 'errors'],
  forward: ['bus', 'wire', 'errors'],
  // OTLP read and written: the read model, the protobuf reader, the decoders.
  otlp: ['errors'],
  otel: ['bus', 'events', 'streamtool', 'errors'],
  mcp: ['bus', 'events', 'streamtool', 'errors'],
  'ai-sdk': ['bus', 'events', 'streamtool', 'errors'],
  langchain: ['bus', 'events', 'streamtool', 'errors'],
  testing: ['bus', 'events', 'streamtool', 'otel', 'wire', 'forward', 'otlp', 'errors', 'vendor'],
  sidecar: ['bus', 'events', 'streamtool', 'otel', 'wire', 'otlp', 'errors'],
  'sidecar/intake': ['pipeline'],
  'sidecar/pipeline': ['export'],
  'sidecar/export': [],
  // `tooltrace view`: journals through the sidecar's pipeline and tracer wiring, drawn; the
  // sidecar only through its door below.
  view: ['bus', 'events', 'streamtool', 'otel', 'wire', 'otlp', 'sidecar', 'errors'],
  demo: [
    'bus',
    'events',
    'streamtool',
    'otel',
    'wire',
    'forward',
    'otlp',
    'sidecar',
    'view',
    'errors',
  ],
  cli: [
    'bus',
    'events',
    'streamtool',
    'otel',
    'wire',
    'forward',
    'otlp',
    'sidecar',
    'view',
    'demo',
    'errors',
  ],
};

for (const [layer, allowed] of Object.entries(mayImport)) {
  if (layer !== 'testing' && allowed.includes('testing')) {
    throw new Error(
      `eslint.config.js: src/${layer} is product code and may not import src/testing`,
    );
  }
}

/**
 * Folders that reach another through one door only, a file named here, never anything else of
 * it: `view` turns journals into spans with the sidecar's own wiring (`traceSidecarBus`, the
 * pipeline, the resource), all of it exported by the pipeline's index, and nothing of the
 * sidecar's export room or composition.
 */
const doors = {
  view: { sidecar: 'pipeline/index.js' },
};

/**
 * Folders that other folders may import only through the barrels named here, never a file
 * behind them: what `otel` shares is its public entry and the internals its sidecar and command
 * need, so a file moved or renamed inside it breaks nothing outside.
 */
const barrels = {
  otel: ['index.js', 'internal.js'],
  otlp: ['index.js', 'read.js'],
  view: ['index.js'],
};

/**
 * Rooms inside a folder that must not import each other: each is built on the folder's shared
 * core only (`otel/tool-calls` and `otel/agent` on the span core of `otel`).
 */
const siblingRooms = {
  otel: ['tool-calls', 'agent'],
};

const topFolders = Object.keys(mayImport).filter((name) => !name.includes('/'));
const sidecarRooms = ['intake', 'pipeline', 'export'];

// A folder under src without a line above has no rule: refuse to lint rather than let it pass.
for (const [parent, known] of [
  ['src', topFolders],
  ['src/sidecar', sidecarRooms],
]) {
  for (const entry of readdirSync(join(import.meta.dirname, parent), { withFileTypes: true })) {
    if (entry.isDirectory() && !known.includes(entry.name)) {
      throw new Error(`eslint.config.js: ${parent}/${entry.name} has no line in mayImport`);
    }
  }
}

/** The root entry (`tooltrace`) is these layers; none of them may load OpenTelemetry. */
const rootLayers = new Set(['bus', 'events', 'streamtool', 'wire', 'errors']);

const noOpenTelemetry = {
  group: ['@opentelemetry/*'],
  message: 'The root entry never imports OpenTelemetry.',
};

/**
 * `tooltrace/forward` loads no OpenTelemetry package: an agent that only forwards its events
 * needs none (its problems go to its own `onError`, not to the API's `diag`).
 */
const noOpenTelemetryInForward = {
  group: ['@opentelemetry/*'],
  message: 'tooltrace/forward loads no OpenTelemetry package.',
};

/**
 * `tooltrace/otel` loads nothing of OpenTelemetry but the API (its one peer dependency); never
 * the SDK, an exporter or OTLP. The logs API, an optional peer, is required at run time only when
 * stream events are asked for as log records without a provider (`logger-provider.ts`).
 */
const apisOnly = {
  group: ['@opentelemetry/*', '!@opentelemetry/api'],
  message: 'tooltrace/otel loads nothing of OpenTelemetry but the API (its one peer dependency).',
};

const UPS = ['../', '../../', '../../../'];

/** Specifiers that reach folder `name` of src from a file up to three folders deep. */
const pathsTo = (name) => UPS.flatMap((up) => [`${up}${name}`, `${up}${name}/*`]);

/** Specifiers that reach a file of folder `name` behind its barrels (any depth below it too). */
const pastBarrels = (name) =>
  UPS.flatMap((up) => [
    `${up}${name}/**`,
    ...barrels[name].map((barrel) => `!${up}${name}/${barrel}`),
  ]);

/**
 * The adapters (`tooltrace/mcp`, `tooltrace/ai-sdk`, `tooltrace/langchain`) load nothing of OpenTelemetry but the API
 * (context propagation, the active span); their SDKs are optional peers the user brings.
 */
const adapterApiOnly = {
  group: ['@opentelemetry/*', '!@opentelemetry/api'],
  message: 'The adapters load nothing of OpenTelemetry but the API.',
};

function layerRule(layer) {
  const [top, room] = layer.split('/');
  const allowedTop = mayImport[room === undefined ? layer : top];
  const patterns = topFolders
    .filter((name) => name !== top && !allowedTop.includes(name))
    .map((name) => ({
      group: pathsTo(name),
      message:
        name === 'testing'
          ? `src/${layer} must not depend on src/testing: product code never imports the fakes the package ships (testing imports product code, not the other way).`
          : `src/${layer} must not depend on src/${name} (bus <- streamtool <- otel <- sidecar <- view <- cli/demo; wire, forward, otlp, mcp, ai-sdk and langchain beside).`,
    }));
  for (const [name, door] of Object.entries(doors[layer] ?? {})) {
    // Any specifier into src/<name> (from any depth) but the door itself.
    patterns.push({
      regex: `^(\\.\\./)+${name}(?!/${door.replaceAll('.', '\\.')}$)(/|$)`,
      message: `src/${layer} imports src/${name} only through ${name}/${door}.`,
    });
  }
  for (const name of Object.keys(barrels)) {
    if (name === top || !allowedTop.includes(name)) continue;
    patterns.push({
      group: pastBarrels(name),
      message: `src/${layer} imports src/${name} only through ${barrels[name].map((barrel) => `${name}/${barrel}`).join(' or ')}.`,
    });
  }
  if (room !== undefined) {
    const forbiddenRooms = sidecarRooms.filter(
      (name) => name !== room && !mayImport[layer].includes(name),
    );
    if (forbiddenRooms.length > 0) {
      patterns.push({
        group: forbiddenRooms.flatMap((name) => [`../${name}`, `../${name}/*`]),
        message: `src/${layer} must not depend on ${forbiddenRooms.map((name) => `src/sidecar/${name}`).join(' or ')} (intake -> pipeline -> export).`,
      });
    }
    patterns.push({
      group: ['../*.js', '../index.js'],
      message: `src/${layer} must not depend on the sidecar's composition (src/sidecar/*.ts).`,
    });
  }
  if (rootLayers.has(layer)) patterns.push(noOpenTelemetry);
  if (layer === 'forward') patterns.push(noOpenTelemetryInForward);
  if (layer === 'otel') patterns.push(apisOnly);
  if (layer === 'mcp' || layer === 'ai-sdk' || layer === 'langchain') patterns.push(adapterApiOnly);
  // The sidecar's rooms have rules of their own; its own rule covers the composition only.
  const files = layer === 'sidecar' ? ['src/sidecar/*.ts'] : [`src/${layer}/**/*.ts`];
  return {
    files,
    rules: { 'no-restricted-imports': ['error', { patterns }] },
  };
}

/**
 * The rule for room `room` of folder `top`: the folder's own rule, plus no import of its
 * sibling rooms (a later config replaces the rule's options, so it repeats the folder's).
 */
function siblingRule(top, room) {
  const folderRule = layerRule(top);
  const [, options] = folderRule.rules['no-restricted-imports'];
  const siblings = siblingRooms[top].filter((name) => name !== room);
  return {
    files: [`src/${top}/${room}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...options.patterns,
            {
              group: siblings.flatMap((name) => [`../${name}`, `../${name}/*`]),
              message: `src/${top}/${room} must not depend on ${siblings.map((name) => `src/${top}/${name}`).join(' or ')}: each is built on the shared core of src/${top}.`,
            },
          ],
        },
      ],
    },
  };
}

/** The files at the root of src (`index.ts`, `cli.ts`) are product code too. */
const noTestingAtRoot = {
  group: ['./testing', './testing/*'],
  message:
    'src/*.ts must not depend on src/testing: product code never imports the fakes the package ships.',
};

/** One config per folder of src (the sidecar's rooms included), exported for the lint test. */
export const layerRules = [
  {
    files: ['src/*.ts'],
    ignores: ['src/index.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noTestingAtRoot] }] },
  },
  {
    files: ['src/index.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [noOpenTelemetry, noTestingAtRoot] }],
    },
  },
  ...Object.keys(mayImport).map(layerRule),
  ...Object.entries(siblingRooms).flatMap(([top, rooms]) =>
    rooms.map((room) => siblingRule(top, room)),
  ),
];

export default tseslint.config(
  { ignores: ['dist/**', 'coverage/**', 'node_modules/**', '.readme-blocks/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // One program for every file (tsconfig.json covers them all): the project service
        // took a third more CPU for the same findings.
        project: ['./tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportAllDeclaration', message: 'Name every export; no `export *`.' },
        {
          selector: "MemberExpression[property.name='enterWith']",
          message: 'Use AsyncLocalStorage.run(), never enterWith().',
        },
      ],
    },
  },
  ...layerRules,
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    files: ['eslint.config.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Built against the peers bench:peers installs into a scratch folder (ai 7, @ai-sdk/otel,
    // OpenInference), not against this project's devDependencies: linted without types.
    files: ['bench/peers/*.ts'],
    ...tseslint.configs.disableTypeChecked,
  },
);
