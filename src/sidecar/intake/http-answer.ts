import type { ServerResponse } from 'node:http';

/** An answer other than 200 to `POST /v1/events`, given once the request body was read. */
export interface Refusal {
  status: number;
  message: string;
  headers?: Record<string, string>;
}

/** 401: the bearer token is missing or names no client. */
export function unauthorized(): Refusal {
  return {
    status: 401,
    message: 'missing or wrong bearer token',
    headers: { 'WWW-Authenticate': 'Bearer' },
  };
}

/** 413: the body is over `maxBytes`. */
export function tooLarge(maxBytes: number): Refusal {
  return { status: 413, message: `body exceeds ${maxBytes} bytes` };
}

/** 429: intake pushes back (`message` says why); retry after `retryAfterSeconds`. */
export function busy(message: string, retryAfterSeconds: number): Refusal {
  return { status: 429, message, headers: { 'Retry-After': String(retryAfterSeconds) } };
}

/** 503: the sidecar stops; a forwarder sends the body to the next one. */
export function shuttingDown(retryAfterSeconds: number): Refusal {
  return {
    status: 503,
    message: 'the sidecar is shutting down',
    headers: { 'Retry-After': String(retryAfterSeconds) },
  };
}

/** One JSON value and a newline. */
export function json(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

/** Answers `status` with `body`, unless an answer went out already. */
export function send(response: ServerResponse, status: number, type: string, body: string): void {
  if (response.headersSent) return;
  response.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  response.end(body);
}

/** Answers a refusal as `{"error": message}` with its headers, unless an answer went out already. */
export function refuse(response: ServerResponse, refusal: Refusal): void {
  if (response.headersSent) return;
  for (const [name, value] of Object.entries(refusal.headers ?? {})) {
    response.setHeader(name, value);
  }
  send(response, refusal.status, 'application/json', json({ error: refusal.message }));
}
