import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Dependencies point one way: bus <- streamtool <- otel <- sidecar.
 * Each entry lists the folders a layer must not import from.
 */
const layers = {
  bus: ['events', 'streamtool', 'otel', 'wire', 'sidecar', 'testing', 'demo'],
  events: ['streamtool', 'otel', 'wire', 'sidecar', 'testing', 'demo'],
  streamtool: ['otel', 'wire', 'sidecar', 'testing', 'demo'],
  otel: ['wire', 'sidecar', 'testing', 'demo'],
  wire: ['streamtool', 'otel', 'sidecar', 'testing', 'demo'],
  forward: ['events', 'streamtool', 'otel', 'sidecar', 'testing', 'demo'],
  errors: ['bus', 'events', 'streamtool', 'otel', 'wire', 'sidecar', 'testing', 'demo'],
  testing: ['sidecar', 'demo'],
};

/** The root entry (`tooltrace`) is these layers; none of them may load OpenTelemetry. */
const rootLayers = new Set(['bus', 'events', 'streamtool', 'wire', 'errors']);

const noOpenTelemetry = {
  group: ['@opentelemetry/*'],
  message: 'The root entry never imports OpenTelemetry.',
};

/** `tooltrace/forward` runs in the agent: of OpenTelemetry it may load the API only. */
const apiOnly = {
  group: ['@opentelemetry/*', '!@opentelemetry/api'],
  message: 'tooltrace/forward loads nothing of OpenTelemetry but the API.',
};

const layerRules = Object.entries(layers).map(([layer, forbidden]) => ({
  files: [`src/${layer}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          ...forbidden.map((name) => ({
            group: [`../${name}`, `../${name}/*`, `../../${name}/*`],
            message: `src/${layer} must not depend on src/${name} (bus <- streamtool <- otel <- sidecar).`,
          })),
          ...(rootLayers.has(layer) ? [noOpenTelemetry] : []),
          ...(layer === 'forward' ? [apiOnly] : []),
        ],
      },
    ],
  },
}));

export default tseslint.config(
  { ignores: ['dist/**', 'coverage/**', 'node_modules/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['eslint.config.js'] },
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
  {
    files: ['src/index.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noOpenTelemetry] }] },
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
);
