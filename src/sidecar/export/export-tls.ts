import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigurationError } from '../../errors/index.js';

/**
 * TLS material for exporting over `https://`, read from the files OpenTelemetry's variables name.
 * Each part left out keeps Node's default: the bundled root certificates, no client certificate.
 */
export interface ExportTls {
  /** PEM certificates the endpoint's certificate must chain to (a private CA). */
  readonly ca?: Buffer;
  /** PEM client certificate (and chain) for mutual TLS. */
  readonly cert?: Buffer;
  /** PEM private key of {@link ExportTls.cert}, unencrypted. */
  readonly key?: Buffer;
}

/**
 * The TLS material `OTEL_EXPORTER_OTLP_CERTIFICATE`, `OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE` and
 * `OTEL_EXPORTER_OTLP_CLIENT_KEY` name (each overridden by its variant for `signal`,
 * `OTEL_EXPORTER_OTLP_TRACES_*` or `OTEL_EXPORTER_OTLP_METRICS_*`), or `undefined` when none is
 * set. Every file is read and checked here, at start-up, so a wrong path, a file that is not PEM
 * (a DER file would be taken by the checks but ignored by TLS), a key without its certificate or
 * a key that belongs to another certificate is a {@link ConfigurationError} naming the variable,
 * not a TLS failure at the first export.
 */
export function readExportTls(
  env: NodeJS.ProcessEnv,
  signal: 'TRACES' | 'METRICS' = 'TRACES',
): ExportTls | undefined {
  const ca = readPem(env, signal, 'CERTIFICATE');
  const cert = readPem(env, signal, 'CLIENT_CERTIFICATE');
  const key = readPem(env, signal, 'CLIENT_KEY');
  if (ca === undefined && cert === undefined && key === undefined) return undefined;
  if (ca !== undefined) certificateOf(ca);
  if ((cert === undefined) !== (key === undefined)) {
    const [given, missing] =
      cert === undefined ? [key!, 'CLIENT_CERTIFICATE'] : [cert, 'CLIENT_KEY'];
    throw new ConfigurationError(
      `${given.variable} is set but neither OTEL_EXPORTER_OTLP_${signal}_${missing} nor OTEL_EXPORTER_OTLP_${missing} is: mutual TLS needs both the client certificate and its key`,
      { setting: given.variable },
    );
  }
  if (cert !== undefined && key !== undefined) {
    const certificate = certificateOf(cert);
    if (!certificate.checkPrivateKey(privateKeyOf(key))) {
      throw new ConfigurationError(
        `${key.variable}: ${key.path} is not the key of the certificate in ${cert.path} (${cert.variable})`,
        { setting: key.variable },
      );
    }
  }
  return {
    ...(ca === undefined ? {} : { ca: ca.bytes }),
    ...(cert === undefined ? {} : { cert: cert.bytes, key: key!.bytes }),
  };
}

/** PEM markers: `X509Certificate` and `createPrivateKey` take DER as well, which TLS ignores. */
const PEM_CERTIFICATE = '-----BEGIN CERTIFICATE-----';
const PEM_BEGIN = '-----BEGIN ';

/** A file a variable named, with where it came from for messages. */
interface PemFile {
  readonly variable: string;
  readonly path: string;
  readonly bytes: Buffer;
}

function readPem(env: NodeJS.ProcessEnv, signal: string, name: string): PemFile | undefined {
  let variable = `OTEL_EXPORTER_OTLP_${signal}_${name}`;
  let path = env[variable]?.trim();
  if (path === undefined || path === '') {
    variable = `OTEL_EXPORTER_OTLP_${name}`;
    path = env[variable]?.trim();
  }
  if (path === undefined || path === '') return undefined;
  try {
    return { variable, path, bytes: readFileSync(path) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new ConfigurationError(`${variable}: cannot read ${path} (${code})`, {
      setting: variable,
      cause: error,
    });
  }
}

function certificateOf(file: PemFile): X509Certificate {
  const refused = (cause?: unknown): ConfigurationError =>
    new ConfigurationError(`${file.variable}: ${file.path} is not a PEM certificate`, {
      setting: file.variable,
      ...(cause === undefined ? {} : { cause }),
    });
  if (!file.bytes.includes(PEM_CERTIFICATE)) throw refused();
  try {
    return new X509Certificate(file.bytes);
  } catch (error) {
    throw refused(error);
  }
}

function privateKeyOf(file: PemFile): KeyObject {
  try {
    if (!file.bytes.includes(PEM_BEGIN)) throw new Error('no PEM block');
    return createPrivateKey(file.bytes);
  } catch (error) {
    throw new ConfigurationError(
      `${file.variable}: ${file.path} is not an unencrypted PEM private key`,
      { setting: file.variable, cause: error },
    );
  }
}
