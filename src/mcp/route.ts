import { readFileSync } from 'node:fs';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { LiveAccounts } from '../accounts/live-state.ts';
import { RequestRefused } from '../contracts/errors.ts';
import { BODY_SHAPE_LIMITS, describeOversizedShape } from '../contracts/json-shape.ts';
import { describeError } from '../http/errors.ts';
import type { McpCaller, McpServerDeps } from './server.ts';

export interface McpRouteDeps extends Omit<McpServerDeps, 'tools'> {
  live: LiveAccounts;
  /** Host names `/mcp` answers (DNS-rebinding protection); read per request, as a test's port comes late. */
  allowedHosts(): string[];
}

const VERSION = packageVersion();

/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP, stateless (any instance answers any request). Both
 * protocol eras are served from one factory: the current revision (2026-07-28) and the 2025 one that most
 * desktop clients still speak. Each request is authenticated with the API's own keys, then answered by a server
 * built for that caller.
 */
export function mcpRoutes(deps: McpRouteDeps) {
  return async (app: FastifyInstance): Promise<void> => {
    // The handler hands each exchange's AuthInfo to the factory as given; the caller rides along with it.
    const callers = new WeakMap<AuthInfo, McpCaller>();
    // The SDK, the server and its tools are ~5 MB of heap that a gateway whose clients never use /mcp does not
    // need: loaded by the first request to /mcp (about 50 ms, once), the routes being registered at start.
    let loading: ReturnType<typeof load> | undefined;
    const load = async () => {
      // One after the other, so that the loop is given back between their evaluations.
      const sdk = await import('@modelcontextprotocol/server');
      const { servedTools } = await import('./tools/index.ts');
      const { buildMcpServer } = await import('./server.ts');
      const tools = servedTools((route) => deps.app.hasRoute(route));
      const handler = sdk.createMcpHandler(
        (context) => {
          const caller = context.authInfo && callers.get(context.authInfo);
          if (!caller) throw new Error('an MCP exchange reached the server without its caller');
          return buildMcpServer({ ...deps, tools }, caller, VERSION);
        },
        { legacy: 'stateless', onerror: (error) => app.log.debug({ err: error }, 'MCP exchange refused') },
      );
      return { sdk, handler };
    };
    const mcp = () => {
      // A failed load (a file unreadable for a moment) is not kept: the next request tries again.
      loading ??= load().catch((error: unknown) => {
        loading = undefined;
        throw error;
      });
      return loading;
    };
    app.addHook('onClose', async () => {
      const loaded = await loading?.catch(() => undefined);
      if (loaded) await loaded.handler.close();
    });

    // The SDK reads the body itself (and answers a bad one in JSON-RPC): take every body as bytes, its shape bounded
    // first as the API's own bodies are (the SDK's parse and schemas walk every value).
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, async (_request: FastifyRequest, body: Buffer) => {
      const oversized = describeOversizedShape(body, BODY_SHAPE_LIMITS, 'body');
      if (oversized) throw new RequestRefused('invalid', `Invalid body: ${oversized}`);
      return body;
    });
    // Errors before the SDK (a body too large or too slow) in JSON-RPC's shape, as the protocol's clients read.
    app.setErrorHandler(async (error, _request, reply) => {
      const described = describeError(error);
      return reply
        .code(described.status)
        .headers(described.headers)
        .send(jsonRpcError(described.body.error.message));
    });

    app.route({
      method: ['GET', 'POST', 'DELETE'],
      url: '/mcp',
      // Before the body is read: a foreign Host or Origin, or a request without a valid key, costs no upload.
      onRequest: async (request, reply) => {
        const { sdk } = await mcp();
        const hosts = [...sdk.localhostAllowedHostnames(), ...deps.allowedHosts()];
        const host = sdk.validateHostHeader(request.headers.host, hosts);
        const origin = sdk.validateOriginHeader(request.headers.origin, hosts);
        const refused = !host.ok ? host : !origin.ok ? origin : undefined;
        if (refused) return reply.code(403).send(jsonRpcError(refused.message));
        await authenticate(app, request, reply);
        return reply.sent ? reply : undefined;
      },
      handler: async (request, reply) => {
        const holder = request.auth;
        const caller: McpCaller = {
          holder,
          credentials: credentialsOf(request),
          writeTools: deps.live.account(holder.accountId)?.mcpWriteTools ?? false,
        };
        const authInfo: AuthInfo = { token: holder.keyId, clientId: holder.keyId, scopes: [] };
        callers.set(authInfo, caller);
        const { handler } = await mcp();
        return reply.send(await handler.fetch(webRequest(request), { authInfo }));
      },
    });
  };
}

/**
 * The API's own key check; a refusal is the protocol's 401: `WWW-Authenticate: Bearer` (RFC 6750, as the MCP
 * authorization spec asks) and the reason in a JSON-RPC error.
 */
async function authenticate(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
  try {
    await app.requireApiKey(request, reply);
  } catch (error) {
    if (!(error instanceof RequestRefused)) throw error;
    const given = request.headers.authorization !== undefined || request.headers['x-api-key'] !== undefined;
    const challenge = given
      ? `Bearer realm="model-gateway", error="invalid_token", error_description="${error.message.replaceAll('"', "'")}"`
      : 'Bearer realm="model-gateway"';
    reply
      .code(describeError(error).status)
      .header('www-authenticate', challenge)
      .send(jsonRpcError(error.message));
  }
}

function credentialsOf(request: FastifyRequest): Record<string, string> {
  const credentials: Record<string, string> = {};
  const { authorization } = request.headers;
  const apiKey = request.headers['x-api-key'];
  if (typeof authorization === 'string') credentials.authorization = authorization;
  if (typeof apiKey === 'string') credentials['x-api-key'] = apiKey;
  return credentials;
}

function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const body = Buffer.isBuffer(request.body) ? new Uint8Array(request.body) : undefined;
  const host = request.headers.host ?? 'localhost';
  return new Request(`http://${host}${request.url}`, {
    method: request.method,
    headers,
    ...(body !== undefined && request.method === 'POST' && { body }),
  });
}

function jsonRpcError(message: string) {
  return { jsonrpc: '2.0', id: null, error: { code: -32000, message } };
}

/** Host names `/mcp` answers besides localhost: the gateway's and the MCP server's public hosts, and any configured. */
export function mcpHostnames(urls: (string | undefined)[], extra: string[]): string[] {
  const names = new Set(extra);
  for (const url of urls) {
    if (!url) continue;
    try {
      names.add(new URL(url).hostname.toLowerCase());
    } catch {
      // Not a URL: nothing to allow.
    }
  }
  return [...names];
}

function packageVersion(): string {
  try {
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    return String(JSON.parse(text).version ?? '0.0.0');
  } catch {
    return '0.0.0';
  }
}
