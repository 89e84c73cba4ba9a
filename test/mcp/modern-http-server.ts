import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { createMcpHandler, type McpServer } from '@modelcontextprotocol/server';

/** A 2.x MCP server listening on 127.0.0.1 over Streamable HTTP. */
export interface ModernHttpServer {
  /** `http://127.0.0.1:PORT/mcp`. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Answers Node's HTTP requests with a web-standard `fetch` handler (what the 2.x SDK's
 * `createMcpHandler` gives): the request's headers and streamed body in, the answer streamed
 * back out; the client leaving aborts the request's signal.
 */
export function nodeHandler(
  fetch: (request: Request) => Promise<Response>,
): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  return async (request, response) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) for (const each of value) headers.append(name, each);
    }
    const body =
      request.method === 'GET' || request.method === 'HEAD'
        ? undefined
        : (Readable.toWeb(request) as ReadableStream<Uint8Array>);
    const abort = new AbortController();
    response.on('close', () => abort.abort());
    const answer = await fetch(
      new Request(`http://127.0.0.1${request.url ?? '/'}`, {
        method: request.method ?? 'GET',
        headers,
        body,
        signal: abort.signal,
        duplex: 'half',
      }),
    );
    response.writeHead(answer.status, Object.fromEntries(answer.headers));
    if (answer.body === null) {
      response.end();
      return;
    }
    for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) {
      response.write(chunk);
    }
    response.end();
  };
}

/**
 * Serves the `McpServer`s `create` makes (one per request, as `createMcpHandler` does: it
 * speaks MCP 2026-07-28 to clients that ask for it, 2025-11-25 to the others) on 127.0.0.1:0.
 */
export async function startModernHttpServer(create: () => McpServer): Promise<ModernHttpServer> {
  const handler = createMcpHandler(create);
  return listenAtMcp(nodeHandler((request) => handler.fetch(request)));
}

/** Serves `handle` at `/mcp` on 127.0.0.1:0 (any other path is a 404). */
export async function listenAtMcp(
  handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
): Promise<ModernHttpServer> {
  const http = createServer((request, response) => {
    if (new URL(request.url ?? '/', 'http://127.0.0.1').pathname !== '/mcp') {
      response.writeHead(404).end();
      return;
    }
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500);
      response.end(String(error));
    });
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
