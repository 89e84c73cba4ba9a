import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Runs `examples/<name>` with tsx as the README says (`npx tsx examples/<name>`), in an
 * environment without the OpenTelemetry or tooltrace settings a developer's shell may carry,
 * plus `env`; resolves with what it printed.
 */
export function runExample(
  name: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ stdout: string; stderr: string }> {
  const environment = { ...process.env };
  for (const key of Object.keys(environment)) {
    if (key.startsWith('OTEL_') || key.startsWith('TOOLTRACE_')) delete environment[key];
  }
  return run(process.execPath, ['--import', 'tsx', `examples/${name}`], {
    cwd: root,
    env: { ...environment, ...env },
    timeout: 110_000,
  });
}
