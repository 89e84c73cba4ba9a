import { readFileSync } from 'node:fs';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';

/**
 * Test-only certificates under `test/fixtures/tls` (made with `openssl`, valid until 2126): a CA,
 * a server certificate for `127.0.0.1` and `localhost`, and a client certificate (`CN=tooltrace
 * sidecar`), both issued by the CA.
 */
export const TLS_FILES = {
  ca: fixture('ca.pem'),
  serverCert: fixture('server.pem'),
  serverKey: fixture('server-key.pem'),
  clientCert: fixture('client.pem'),
  clientKey: fixture('client-key.pem'),
};

function fixture(name: string): string {
  return fileURLToPath(new URL(`../../fixtures/tls/${name}`, import.meta.url));
}

/** A TLS front for a plaintext receiver, as a collector behind TLS (and mutual TLS) would be. */
export interface TlsTerminator {
  /** `https://127.0.0.1:PORT`. */
  readonly url: string;
  /** The common name of each client certificate presented, `''` for a connection without one. */
  readonly clients: readonly string[];
  close(): Promise<void>;
}

/**
 * Accepts TLS on `127.0.0.1` with the test server certificate, demands a client certificate from
 * the test CA when `mutual` is set, and pipes each connection to the plaintext `targetPort`.
 * `alpn` is what it offers (gRPC needs `h2`).
 */
export async function startTlsTerminator(
  targetPort: number,
  options: { mutual: boolean; alpn: string[] },
): Promise<TlsTerminator> {
  const clients: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer(
    {
      key: readFileSync(TLS_FILES.serverKey),
      cert: readFileSync(TLS_FILES.serverCert),
      ca: readFileSync(TLS_FILES.ca),
      requestCert: options.mutual,
      rejectUnauthorized: options.mutual,
      ALPNProtocols: options.alpn,
    },
    (socket: TLSSocket) => {
      const subject = socket.getPeerCertificate().subject as { CN?: string } | undefined;
      clients.push(subject?.CN ?? '');
      const upstream = connect(targetPort, '127.0.0.1');
      for (const end of [socket, upstream]) {
        sockets.add(end);
        end.once('close', () => sockets.delete(end));
        end.on('error', () => {
          socket.destroy();
          upstream.destroy();
        });
      }
      socket.pipe(upstream).pipe(socket);
    },
  );
  // A refused handshake is the client's failure to see, not the server's.
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    clients,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
