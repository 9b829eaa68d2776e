import { type CallToolResult, ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import type { FastifyInstance } from 'fastify';
import type { KeyHolder } from '../accounts/live-state.ts';
import { RESOURCE_TEMPLATES, RESOURCES, readResource } from './resources.ts';
import { ToolArgumentsError, type ToolContext, type ToolDef } from './tool.ts';
import { toolsFor } from './tools/index.ts';
import { TwinRefused, twinOf } from './twin.ts';

/** The authenticated caller of one MCP request. */
export interface McpCaller {
  holder: KeyHolder;
  /** The credential headers as the client sent them, passed on to every HTTP twin. */
  credentials: Record<string, string>;
  /** Whether the caller's account has the write tools turned on. */
  writeTools: boolean;
}

export interface McpServerDeps {
  /** The gateway's root Fastify instance: the twins are its `/v1` routes. */
  app: FastifyInstance;
  tools: readonly ToolDef[];
  publish: ToolContext['publish'];
  report(message: string, error: unknown): void;
}

const INSTRUCTIONS =
  'Tools of a model gateway: call any of its models (chat, embed, generate_image, transcribe, speak, translate, ' +
  'classify, moderate, rerank, ocr), browse its catalog and prices (list_models, get_model) and read the ' +
  "account's balance, usage, request log and jobs. Every model call is billed to the key's account like the " +
  'HTTP API; a refusal (402 balance or cap, 429 rate limit) comes back as a tool error with its reason.';

const text = (data: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(data) }],
  structuredContent: data,
});

/** A server for one HTTP exchange (the transport is stateless): the caller's tools, over the caller's key. */
export function buildMcpServer(deps: McpServerDeps, caller: McpCaller, version: string): Server {
  const tools = toolsFor(deps.tools, caller);
  const context: ToolContext = { twin: twinOf(deps.app, caller.credentials), publish: deps.publish };
  const server = new Server(
    { name: 'model-gateway', title: 'Model gateway', version },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS },
  );

  server.setRequestHandler('tools/list', () => ({
    tools: [...tools.values()].map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema as { type: 'object' },
      annotations: tool.annotations,
    })),
  }));

  server.setRequestHandler('tools/call', async (request) => {
    const tool = tools.get(request.params.name);
    if (!tool) {
      throw new ProtocolError(
        ProtocolErrorCode.MethodNotFound,
        `Unknown tool '${request.params.name}': tools/list names the tools this key may call`,
      );
    }
    try {
      return text(await tool.call(request.params.arguments, context));
    } catch (error) {
      if (error instanceof TwinRefused) {
        return {
          ...text({ error: errorOf(error) }),
          content: [{ type: 'text', text: error.message }],
          isError: true,
        };
      }
      if (error instanceof ToolArgumentsError) {
        return { content: [{ type: 'text', text: error.message }], isError: true };
      }
      deps.report(`MCP tool ${tool.name} failed`, error);
      return {
        content: [{ type: 'text', text: `The tool ${tool.name} failed inside the gateway` }],
        isError: true,
      };
    }
  });

  server.setRequestHandler('resources/list', () => ({ resources: RESOURCES }));
  server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  server.setRequestHandler('resources/read', (request) => readResource(request.params.uri, context.twin));
  return server;
}

/** The API's error object of a refusal, for clients that read structured content. */
function errorOf(refusal: TwinRefused): unknown {
  const error = (refusal.body as { error?: unknown } | undefined)?.error;
  return error ?? { message: refusal.message, code: refusal.status };
}
