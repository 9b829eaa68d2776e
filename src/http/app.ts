import { constants as zlibConstants } from 'node:zlib';
import compress from '@fastify/compress';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { EdgeLimits } from '../config.ts';
import { RequestRefused } from '../contracts/errors.ts';
import { GatewayMetrics } from '../observability/metrics.ts';
import { describeAnthropicError } from './anthropic-errors.ts';
import { authPlugin } from './auth.ts';
import { clientPath } from './client-paths.ts';
import { DEFAULT_EDGE_LIMITS, edgeServerOptions, installEdge } from './edge.ts';
import { describeError } from './errors.ts';
import { observeRequests } from './observe.ts';
import { registerOpenApi } from './openapi.ts';
import { gatewayRequestId, setRequestIdHeaders } from './request-id.ts';
import { type OpsDeps, opsRoutes } from './routes/ops.ts';
import { type RouteDeps, registerRoutes } from './routes.ts';
import { webSocketPlugin } from './websocket.ts';

export interface AppDeps extends RouteDeps {
  adminToken: string;
  /** Accepted beside adminToken while a rotation rolls out. */
  previousAdminToken?: string;
  logLevel?: string;
  /** Body size and timeouts of the HTTP server (src/http/edge.ts). */
  edge?: EdgeLimits;
  /** What /readyz checks and /metrics reads from the store. */
  ops?: Omit<OpsDeps, 'metrics'>;
}

/** The encodings a JSON request body may come in (docs/api.md, Compression). */
const REQUEST_ENCODINGS = ['gzip', 'deflate', 'br'] as const;

/**
 * Answers compressed when the client accepts it (the model list is over a megabyte). Server-sent events are never
 * compressed: a compressor holds bytes back until its block fills, which would stall a stream's chunks.
 * Brotli at quality 4: near gzip's speed, smaller; its default (11) takes seconds on the model list.
 */
const COMPRESSION = {
  global: true,
  threshold: 1024,
  encodings: ['br', 'gzip', 'deflate'] as ('br' | 'gzip' | 'deflate')[],
  brotliOptions: { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 4 } },
  customTypes: (type: string) => !/event-stream/i.test(type) && COMPRESSIBLE.test(type),
  // A JSON body may come encoded: decoded here, and held to the body limit once decoded as well as sent (Fastify
  // counts both). A multipart upload never is (src/http/edge.ts refuses it first).
  requestEncodings: [...REQUEST_ENCODINGS, 'identity' as const],
  onUnsupportedRequestEncoding: (encoding: string) =>
    new RequestRefused(
      'unsupported_media_type',
      `'content-encoding': '${encoding.slice(0, 100)}' is not accepted; send ${REQUEST_ENCODINGS.join(', ')} or none`,
    ),
};
const COMPRESSIBLE = /^(?:text\/|application\/(?:json|[\w.+-]*\+json|x-ndjson|jsonl|xml|javascript))/i;

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const edge = deps.edge ?? DEFAULT_EDGE_LIMITS;
  const app = Fastify({
    ...edgeServerOptions(edge),
    logger: { level: deps.logLevel ?? 'info' },
    // One line per request instead, with its account, model and cost (src/http/observe.ts).
    logController: new LogController({ disableRequestLogging: true }),
    // Never the client's X-Request-Id: that one is its correlation id (src/http/request-id.ts).
    genReqId: gatewayRequestId,
    // Refused in the API's own error shape instead (below).
    return503OnClosing: false,
    // Anthropic's SDKs given the `/v1` base address call `/v1/v1/messages` (src/http/client-paths.ts).
    rewriteUrl: clientPath,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installEdge(app, edge);
  await app.register(compress, COMPRESSION);
  const metrics = new GatewayMetrics(deps.ops?.probe);
  observeRequests(app, metrics);

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    setRequestIdHeaders(request, reply);
    if (closing) {
      reply.header('connection', 'close');
      throw new RequestRefused('unavailable', 'The gateway is shutting down; retry the request');
    }
  });

  app.setNotFoundHandler(async (request, reply) => {
    const message = `Unknown request URL: ${request.method} ${request.url}`;
    // Anthropic's clients read errors under /v1/messages in Anthropic's shape, unknown paths included.
    if (/^\/v1\/messages(?:[/?]|$)/.test(request.url)) {
      const described = describeAnthropicError(new RequestRefused('not_found', message), request.id);
      return reply.code(404).send(described.body);
    }
    return reply.code(404).send(describeError(new RequestRefused('not_found', message)).body);
  });
  // Set before any route plugin so that every encapsulated context inherits it.
  app.setErrorHandler(async (error, request, reply) => {
    const described = describeError(error);
    // Refusals the gateway chose (RequestRefused, provider failures among them) are answers, not faults.
    if (described.status >= 500 && !(error instanceof RequestRefused))
      request.log.error({ err: error }, 'request failed');
    return reply.code(described.status).headers(described.headers).send(described.body);
  });
  // After the error handler, which its encapsulated UI inherits; before the routes, which it learns of.
  await registerOpenApi(app);
  // Limits are set per route, where each upload's size limit is known (src/http/uploads.ts).
  await app.register(multipart);
  await app.register(authPlugin, {
    live: deps.live,
    adminToken: deps.adminToken,
    previousAdminToken: deps.previousAdminToken,
  });
  // Before the routes: its onRoute hook learns which paths are WebSocket endpoints.
  await app.register(webSocketPlugin);
  await registerRoutes(app, deps);
  if (deps.ops) await opsRoutes(app, { ...deps.ops, metrics });

  return app;
}
