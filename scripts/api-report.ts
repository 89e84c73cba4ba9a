/**
 * The API report: one `api/<entry>.api.md` per package entry point, written by API Extractor
 * from the built declarations (`dist`, so build first).
 *
 *   tsx scripts/api-report.ts          write the reports (commit them with the change)
 *   tsx scripts/api-report.ts --check  fail when the public API differs from the reports
 *
 * `npm test` runs the check, so a change to the public API cannot land without its report.
 */
import { fileURLToPath } from 'node:url';
import {
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  type ExtractorMessage,
} from '@microsoft/api-extractor';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Each entry of the package's `exports` map: report name and built declarations. */
const ENTRIES = [
  { report: 'tooltrace', types: 'dist/index.d.ts' },
  { report: 'tooltrace-otel', types: 'dist/otel/index.d.ts' },
  { report: 'tooltrace-forward', types: 'dist/forward/index.d.ts' },
  { report: 'tooltrace-mcp', types: 'dist/mcp/index.d.ts' },
  { report: 'tooltrace-ai-sdk', types: 'dist/ai-sdk/index.d.ts' },
  { report: 'tooltrace-langchain', types: 'dist/langchain/index.d.ts' },
  { report: 'tooltrace-sidecar', types: 'dist/sidecar/bundle.d.ts' },
  { report: 'tooltrace-testing', types: 'dist/testing/index.d.ts' },
];

const check = process.argv.includes('--check');
const base = ExtractorConfig.loadFile(`${ROOT}api-extractor.json`);
const changed: string[] = [];
let failed = false;

for (const entry of ENTRIES) {
  const config = ExtractorConfig.prepare({
    configObject: {
      ...base,
      projectFolder: ROOT,
      mainEntryPointFilePath: `${ROOT}${entry.types}`,
      apiReport: { ...base.apiReport!, enabled: true, reportFileName: entry.report },
    },
    configObjectFullPath: `${ROOT}api-extractor.json`,
    packageJsonFullPath: `${ROOT}package.json`,
  });
  const result = Extractor.invoke(config, {
    localBuild: !check,
    messageCallback: (message: ExtractorMessage) => {
      // Warnings are written into the report itself; only say what stops the run.
      if (message.logLevel !== ExtractorLogLevel.Error) message.handled = true;
    },
  });
  if (result.apiReportChanged) changed.push(`api/${entry.report}.api.md`);
  if (result.errorCount > 0) failed = true;
}

if (check && changed.length > 0) {
  console.error(
    `The public API changed: ${changed.join(', ')} no longer match${changed.length === 1 ? 'es' : ''}.\n` +
      'Run `npm run api:report` and commit the updated reports with the change.',
  );
  process.exitCode = 1;
} else if (failed) {
  process.exitCode = 1;
} else {
  console.log(
    check
      ? `API reports match (${ENTRIES.length} entry points).`
      : `API reports written: ${changed.length === 0 ? 'no change' : changed.join(', ')}.`,
  );
}
