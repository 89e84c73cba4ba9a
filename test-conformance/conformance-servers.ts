import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { McpServer as McpServer1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  McpServer as McpServer2,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import type { EventBus } from '../src/bus/index.js';
import { serveMcpTools, type McpServedTool } from '../src/mcp/index.js';
import type { ChannelTool, ToolEvent } from '../src/streamtool/index.js';
import { listenAtMcp, nodeHandler } from '../test/mcp/modern-http-server.js';
import { sdkAloneServer } from './conformance-sdk-alone.js';
import { conformanceTools2026 } from './conformance-tools-2026.js';

/** A 1×1 PNG. */
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** A WAV file of 8 silent 8-bit mono samples at 8 kHz. */
function silentWav(): string {
  const samples = 8;
  const wav = Buffer.alloc(44 + samples, 0x80);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + samples, 4);
  wav.write('WAVEfmt ', 8, 'ascii');
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(8000, 24); // sample rate
  wav.writeUInt32LE(8000, 28); // byte rate
  wav.writeUInt16LE(1, 32); // block align
  wav.writeUInt16LE(8, 34); // bits per sample
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(samples, 40);
  return wav.toString('base64');
}

/** A ChannelTool whose one event is `complete` with `payload`, after a turn of work. */
function answering(name: string, payload: unknown): ChannelTool {
  return {
    name,
    async *stream(): AsyncGenerator<ToolEvent> {
      await sleep(1);
      yield { kind: 'complete', payload };
    },
  };
}

/**
 * The tools the conformance suite's server scenarios call, as tooltrace tools: each a
 * ChannelTool whose final payload is the `CallToolResult` the scenario asks for, a failure, or
 * a stream of progress.
 */
export const conformanceTools: readonly McpServedTool[] = [
  {
    tool: answering('test_simple_text', {
      content: [{ type: 'text', text: 'This is a simple text response for testing.' }],
    }),
    description: 'Returns simple text',
  },
  {
    tool: answering('test_image_content', {
      content: [{ type: 'image', data: PNG, mimeType: 'image/png' }],
    }),
    description: 'Returns an image',
  },
  {
    tool: answering('test_audio_content', {
      content: [{ type: 'audio', data: silentWav(), mimeType: 'audio/wav' }],
    }),
    description: 'Returns audio',
  },
  {
    tool: answering('test_embedded_resource', {
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
    description: 'Returns an embedded resource',
  },
  {
    tool: answering('test_multiple_content_types', {
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: '{"test":"data","value":123}',
          },
        },
      ],
    }),
    description: 'Returns text, an image and a resource',
  },
  {
    tool: {
      name: 'test_error_handling',
      // eslint-disable-next-line require-yield
      async *stream(): AsyncGenerator<ToolEvent> {
        await sleep(1);
        throw new Error('This tool intentionally returns an error for testing');
      },
    },
    description: 'Always fails',
  },
  {
    tool: {
      name: 'test_tool_with_progress',
      async *stream(signal): AsyncGenerator<ToolEvent> {
        for (const progress of [0, 0.5, 1]) {
          yield { kind: 'progress', progress };
          if (progress < 1) await sleep(50, undefined, { signal });
        }
        yield { kind: 'complete', payload: 'progress reported: 0%, 50%, 100%' };
      },
    },
    description: 'Reports progress three times',
  },
];

/** An MCP server listening on 127.0.0.1. */
export interface ConformanceServer {
  /** The Streamable HTTP endpoint, `http://127.0.0.1:PORT/mcp`. */
  readonly url: string;
  close(): Promise<void>;
}

/** Which SDK line's `McpServer` serves the tools. */
export type SdkLine = '1.x' | '2.x';

/**
 * Serves {@link conformanceTools} through `serveMcpTools` over Streamable HTTP, stateless (a
 * server per POST, as both SDKs document it), every call emitted on `bus`.
 */
export async function startConformanceServer(
  line: SdkLine,
  bus: EventBus,
): Promise<ConformanceServer> {
  return listenAtMcp(line === '1.x' ? legacyHandler(bus) : modernHandler(bus));
}

/**
 * The same tools registered on the 2.x `McpServer` alone (no tooltrace; `conformance-sdk-alone.ts`),
 * served as {@link startConformanceServer} serves them: the baseline of the comparison.
 */
export function startSdkAloneServer(): Promise<ConformanceServer> {
  return listenAtMcp(guarded(createMcpHandler(sdkAloneServer)));
}

type Handler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

/** The 1.x line: an `McpServer` and a `StreamableHTTPServerTransport` for each POST. */
function legacyHandler(bus: EventBus): Handler {
  return async (request, response) => {
    if (request.method !== 'POST') {
      response.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const server = new McpServer1({ name: 'tooltrace-conformance', version: '1.0.0' });
    serveMcpTools(server, conformanceTools, { bus });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response);
  };
}

/** The 2.x line: `createMcpHandler`'s web-standard `fetch`, a new `McpServer` per request. */
function modernHandler(bus: EventBus): Handler {
  return guarded(
    createMcpHandler(() => {
      const server = new McpServer2({ name: 'tooltrace-conformance', version: '2.0.0' });
      serveMcpTools(server, [...conformanceTools, ...conformanceTools2026], { bus });
      return server;
    }),
  );
}

/** A 2.x handler behind the DNS-rebinding checks, as a Node request handler. */
function guarded(handler: { fetch(request: Request): Promise<Response> }): Handler {
  // DNS rebinding: a local server answers only requests for a local host from a local origin.
  return nodeHandler(
    async (request) =>
      hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
      originValidationResponse(request, localhostAllowedOrigins()) ??
      (await handler.fetch(request)),
  );
}
