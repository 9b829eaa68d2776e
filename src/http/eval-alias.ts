import type { FastifyReply, FastifyRequest } from 'fastify';
import { EVAL_ALIAS, type EvalService } from '../evals/service.ts';
import { routingHeaders } from '../pipeline/headers.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The routing an `eval:` alias made before the route ran, for the request's record (`callContext`). */
    routedBefore?: unknown;
  }
}

/** The routes whose `model` may be `eval:<id>`. */
const ALIASED = new Set(['/v1/chat/completions', '/v1/messages']);

/**
 * `eval:<id>` as a model: resolved to the eval's winner before the route runs, so the route, the pipeline and
 * the bill see the winner (X-Model names it) and the answer says why (`X-Routing-Reason: eval:<id>`). The
 * request log keeps the body the client sent, alias and all: the route gets a new body, not the same one changed.
 */
export function evalAliasHook(evals: EvalService) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (request.method !== 'POST' || !ALIASED.has(request.routeOptions.url ?? '')) return;
    const body = request.body as { model?: unknown } | undefined;
    if (typeof body?.model !== 'string' || !body.model.startsWith(EVAL_ALIAS)) return;
    const resolved = await evals.resolveAlias(request.auth, body.model);
    request.body = { ...body, model: resolved.model };
    const reason = `eval:${resolved.evalId}`;
    reply.headers(
      routingHeaders({ strategy: 'eval', model: resolved.model, reason, baseline: resolved.model }),
    );
    request.routedBefore = { requested: body.model, strategy: 'eval', chosen: resolved.model, reason };
  };
}
