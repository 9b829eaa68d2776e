import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { AnthropicErrorBody, DOCUMENTED_RESPONSES, ErrorBody } from './openapi-responses.ts';

type TransformInput = Parameters<typeof jsonSchemaTransform>[0];

/**
 * The reference UI's Content-Security-Policy: everything from the gateway itself (no CDN, no remote validator
 * badge). Swagger UI sets element styles inline, hence 'unsafe-inline' for styles alone; scripts stay 'self'.
 */
const DOCS_CSP =
  "default-src 'self'; base-uri 'self'; font-src 'self' data:; frame-ancestors 'self'; img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' 'unsafe-inline'; connect-src 'self'";

/** The API the document describes: the client and operator routes; dashboard pages, media and MCP are left out. */
const DESCRIBED = /^\/(?:v1\/|admin\/|healthz$|readyz$|metrics$)/;

function security(url: string): Record<string, string[]>[] {
  if (url === '/healthz' || url === '/readyz') return [];
  if (url.startsWith('/admin/') || url === '/metrics') return [{ adminToken: [] }];
  return [{ apiKey: [] }];
}

/** `/v1/sub-accounts/:id` → `sub-accounts`; the operator's routes are `admin`, the probes `operations`. */
function tag(url: string): string {
  if (url.startsWith('/admin/')) return 'admin';
  if (!url.startsWith('/v1/')) return 'operations';
  return url.split('/')[2] ?? 'v1';
}

/**
 * Adds what the route does not say itself (its documented responses, the error shape, its credential and tag),
 * then lets the zod type provider turn the zod schemas into JSON Schema.
 */
function transform(input: TransformInput) {
  const { schema, url, route } = input;
  if (!DESCRIBED.test(url) || url === '/v1/openapi.json') return { schema: { ...schema, hide: true }, url };
  const method = (Array.isArray(route.method) ? route.method[0] : route.method) as string;
  const documented = DOCUMENTED_RESPONSES[`${method} ${url}`];
  const response = schema?.response ?? documented ?? {};
  return jsonSchemaTransform({
    ...input,
    schema: {
      ...schema,
      tags: [tag(url)],
      security: security(url),
      response:
        url === '/metrics' || url === '/healthz' || url === '/readyz'
          ? response
          : url.startsWith('/v1/messages')
            ? { ...response, '4XX': AnthropicErrorBody, '5XX': AnthropicErrorBody }
            : { ...response, '4XX': ErrorBody, '5XX': ErrorBody },
    },
  });
}

/**
 * The OpenAPI 3.1 document, generated from the routes' zod schemas, at `/v1/openapi.json` (no credential, like
 * the reference UI at `/docs`, whose assets are served from the package, never a CDN). Registered before the
 * routes, which it learns of as they are added.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Model gateway API',
        // The API's version, as /v1 names it (not the package's).
        version: '1',
        description:
          'An OpenAI-compatible API in front of many model providers, with prepaid balances, sub-accounts, caps, budgets, usage and a request log. Errors are `{error:{message,type,code,param}}`.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (sk-gw-…)' },
          adminToken: { type: 'http', scheme: 'bearer', description: "The operator's admin token" },
        },
      },
    },
    transform,
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: DOCS_CSP,
    uiHooks: {
      // The package sends /docs/static/index.html to /docs/ by rewriting the path's end, which a query string hides:
      // it redirected such a request to itself, forever.
      onRequest: (request, reply, done) => {
        const [path, query] = request.url.split('?', 2);
        if (path === '/docs/static/index.html' && query !== undefined) {
          reply.redirect(`/docs/?${query}`);
          return;
        }
        done();
      },
    },
  });
  // Generating the document walks every route's schemas (a few hundred milliseconds): once, before serving, rather
  // than on the event loop of a first reader; the text is kept as the document cannot change after start.
  let text: string | undefined;
  app.addHook('onReady', async () => {
    text = JSON.stringify(app.swagger());
  });
  app.get('/v1/openapi.json', (_request, reply) => {
    text ??= JSON.stringify(app.swagger());
    return reply.type('application/json; charset=utf-8').send(text);
  });
}
