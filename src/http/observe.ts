import type { Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GatewayMetrics } from '../observability/metrics.ts';
import { SpanStatusCode, startServerSpan } from '../observability/tracing.ts';
import { clientRequestId } from './request-id.ts';

const spans = new WeakMap<FastifyRequest, Span>();

/**
 * Per request: a server span (upstream calls made while handling it are its children), the request metrics, and
 * one log line with the request id, account, model, provider, status and cost (Fastify's own two lines per
 * request are turned off in app.ts).
 */
export function observeRequests(app: FastifyInstance, metrics: GatewayMetrics): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const client = clientRequestId(request);
    const { span, run } = startServerSpan(`${request.method} ${route}`, {
      'http.request.method': request.method,
      'http.route': route,
      'gateway.request_id': request.id,
      ...(client !== undefined && { 'gateway.client_request_id': client }),
    });
    spans.set(request, span);
    // The rest of the request's hooks and its handler run inside the span's context.
    run(done);
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    const log = request.requestLog;
    const model = log?.model ?? '';
    const provider = log?.provider ?? '';
    const seconds = reply.elapsedTime / 1000;
    metrics.requests.inc({ method: request.method, route, status: String(status) });
    metrics.duration.observe({ route, model, provider }, seconds);
    const cache = reply.getHeader('x-cache-status');
    if (typeof cache === 'string') metrics.cache.inc({ result: cache });
    const cost = log?.costNanos ?? null;
    if (cost !== null && cost > 0n) metrics.costNanos.inc({ model, provider }, Number(cost));

    const span = spans.get(request);
    if (span) {
      span.setAttribute('http.response.status_code', status);
      if (request.auth) span.setAttribute('gateway.account_id', request.auth.accountId);
      if (model) span.setAttribute('gateway.model', model);
      if (provider) span.setAttribute('gateway.provider', provider);
      if (cost !== null) span.setAttribute('gateway.cost_usd', Number(cost) / 1e9);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }

    request.log.info(
      {
        client_request_id: clientRequestId(request),
        method: request.method,
        // Without the query: signed media URLs carry their signature there.
        url: request.url.split('?')[0],
        status,
        account: request.auth?.accountId,
        sub_account: request.auth?.subAccountId ?? undefined,
        model: log?.model ?? undefined,
        provider: log?.provider ?? undefined,
        cost_usd: cost === null ? undefined : Number(cost) / 1e9,
        cache: typeof cache === 'string' ? cache : undefined,
        ms: Math.round(reply.elapsedTime),
      },
      'request',
    );
  });
}
