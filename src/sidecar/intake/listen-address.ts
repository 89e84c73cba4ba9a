import { ConfigurationError } from '../../errors/index.js';

/** A `--listen` address. */
export interface ListenAddress {
  host: string;
  port: number;
}

/** Parses `HOST:PORT` (IPv6 as `[::1]:PORT`); a bad one is a {@link ConfigurationError}. */
export function parseListenAddress(text: string): ListenAddress {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text.trim());
  const port = Number(match?.[3]);
  if (match === null || port > 65_535) {
    throw new ConfigurationError(
      `--listen '${text}' is not HOST:PORT (for example 127.0.0.1:4319)`,
      { setting: '--listen' },
    );
  }
  return { host: match[1] ?? match[2]!, port };
}

/** Whether `host` only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare);
}
