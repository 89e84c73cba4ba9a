import {
  defaultResource,
  detectResources,
  hostDetector,
  processDetector,
  resourceFromAttributes,
  serviceInstanceIdDetector,
  type Resource,
} from '@opentelemetry/resources';
import { parseKeyValueList } from '../export/index.js';
import { withoutUrlCredentials } from './url-credentials.js';

/** Flags whose value is a secret (`--token T`, `--otlp-header authorization=…`). */
const SECRET_FLAGS = new Set(['--token', '--otlp-header']);

/**
 * The resource of the spans a process exports, by OpenTelemetry's standard detection: the SDK's
 * defaults (`telemetry.sdk.*`), then the host (`host.name`, `host.arch`, `host.id`), the process
 * (`process.pid`, executable, command, owner, runtime) and a `service.instance.id` (a random
 * UUID, drawn once, so it is stable for the life of the process), and over them `attributes`:
 * `service.name` and what `OTEL_RESOURCE_ATTRIBUTES` sets, which therefore wins (a fixed
 * `service.instance.id` included). Flag values that may be secrets are masked in
 * `process.command_args`. Resolves once the asynchronous attributes (`host.id`) are read.
 */
export async function detectResource(attributes: Record<string, string>): Promise<Resource> {
  const detected = detectResources({
    detectors: [hostDetector, processDetector, serviceInstanceIdDetector],
  });
  await detected.waitForAsyncAttributes?.();
  const commandArgs = detected.attributes['process.command_args'];
  const masked = Array.isArray(commandArgs)
    ? resourceFromAttributes({ 'process.command_args': maskSecrets(commandArgs.map(String)) })
    : undefined;
  return defaultResource()
    .merge(detected)
    .merge(masked ?? null)
    .merge(resourceFromAttributes(attributes));
}

/**
 * {@link detectResource} for a process that reads its resource from the environment as
 * `tooltrace view` and the demo do: `OTEL_RESOURCE_ATTRIBUTES`, with `service.name` from
 * `OTEL_SERVICE_NAME`, else `serviceName`. A malformed `OTEL_RESOURCE_ATTRIBUTES` throws a
 * `ConfigurationError` naming it.
 */
export function detectResourceFromEnv(
  env: NodeJS.ProcessEnv,
  serviceName: string,
): Promise<Resource> {
  return detectResource({
    ...parseKeyValueList(env.OTEL_RESOURCE_ATTRIBUTES, 'OTEL_RESOURCE_ATTRIBUTES'),
    'service.name': env.OTEL_SERVICE_NAME ?? serviceName,
  });
}

/**
 * `args` with the value of every secret flag (`--token X`, `--token=X`) replaced by `***`, and the
 * credentials of any URL (`--otlp-endpoint https://user:secret@…`) masked.
 */
function maskSecrets(args: readonly string[]): string[] {
  return args.map((arg, index) => {
    const equals = arg.indexOf('=');
    if (arg.startsWith('--') && equals > 0 && SECRET_FLAGS.has(arg.slice(0, equals))) {
      return `${arg.slice(0, equals)}=***`;
    }
    return index > 0 && SECRET_FLAGS.has(args[index - 1]!) ? '***' : withoutUrlCredentials(arg);
  });
}
