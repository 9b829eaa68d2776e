import { appendFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, unknown> };
}

/**
 * Every JSON answer a test gateway sends is checked against the gateway's own OpenAPI document, so the whole
 * end-to-end suite validates the document (and the document the answers). A violation is written to `file`;
 * the run's teardown fails on any.
 */
export function checkAnswersAgainstOpenApi(app: FastifyInstance, file: string): void {
  let compiled: ((path: string, method: string, status: number) => ValidateFunction | undefined) | undefined;
  // A callback hook, not an async one: an async onSend hook defers the send, and a handler that calls
  // `reply.send` without returning the reply would then be answered twice.
  app.addHook('onSend', (request, reply, payload, done) => {
    try {
      check(
        request.method,
        request.routeOptions.url,
        reply.statusCode,
        reply.getHeader('content-type'),
        payload,
      );
    } catch (error) {
      appendFileSync(file, `${JSON.stringify({ route: request.url, error: String(error) })}\n`);
    }
    done(null, payload);
  });

  function check(
    method: string,
    route: string | undefined,
    status: number,
    type: unknown,
    payload: unknown,
  ): void {
    if (typeof payload !== 'string' || !route || !String(type ?? '').includes('json')) return;
    compiled ??= validators(app.swagger() as unknown as Document);
    const path = route.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const validate = compiled(path, method, status);
    if (!validate) return;
    let body: unknown;
    try {
      body = JSON.parse(payload);
    } catch {
      return;
    }
    if (validate(body)) return;
    const errors = (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`).join('; ');
    appendFileSync(
      file,
      `${JSON.stringify({ route: `${method} ${path}`, status, errors, body: payload.slice(0, 400) })}\n`,
    );
  }
}

function validators(doc: Document) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'openapi', components: doc.components ?? {} } as never);
  const cache = new Map<string, ValidateFunction | undefined>();
  return (path: string, method: string, status: number): ValidateFunction | undefined => {
    const id = `${method} ${path} ${status}`;
    if (cache.has(id)) return cache.get(id);
    const responses = doc.paths[path]?.[method.toLowerCase()]?.responses;
    const schema = (responses?.[String(status)] ?? responses?.[`${String(status)[0]}XX`])?.content?.[
      'application/json'
    ]?.schema;
    const validate =
      schema === undefined
        ? undefined
        : ajv.compile(
            JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')),
          );
    cache.set(id, validate);
    return validate;
  };
}
