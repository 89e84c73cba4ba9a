/** A network address as written in a config: `host:port` or a URL. */
export interface Endpoint {
  /** `http`, `https`, … or `undefined` for a bare `host:port`. */
  scheme: string | undefined;
  host: string;
  port: number;
  /** The URL path (`/` when there is none); `''` for a bare `host:port`. */
  path: string;
}

/**
 * A Collector config value with its `${env:NAME:-default}` references replaced by their defaults:
 * the address the file uses when the environment sets none (compose sets none; `npm run stack`
 * sets them to loopback ports).
 */
export function withEnvDefaults(text: string): string {
  return text.replace(
    /\$\{env:[A-Za-z_][A-Za-z0-9_]*:-([^}]*)\}/g,
    (_match, value: string) => value,
  );
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { http: 80, https: 443 };

/**
 * Parses `host:port` (collector gRPC exporters, receivers) or a URL (OTLP/HTTP endpoints, data
 * source URLs, `--forward`). Throws naming `where` when there is no host or no port.
 */
export function parseEndpoint(written: string, where: string): Endpoint {
  const text = withEnvDefaults(written);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    const url = new URL(text);
    const scheme = url.protocol.slice(0, -1);
    const port = url.port === '' ? DEFAULT_PORTS[scheme] : Number(url.port);
    if (port === undefined) throw new Error(`${where}: ${text} has no port`);
    return { scheme, host: url.hostname, port, path: url.pathname };
  }
  const match = /^(?<host>[^:/\s]+):(?<port>\d{1,5})$/.exec(text);
  if (match?.groups === undefined) throw new Error(`${where}: ${text} is not host:port`);
  return {
    scheme: undefined,
    host: match.groups.host!,
    port: Number(match.groups.port),
    path: '',
  };
}
