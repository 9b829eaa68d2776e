import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { WebSocket } from 'ws';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import { isValidTag, requestTag } from '../../../chat/request.ts';
import { RequestRefused } from '../../../contracts/errors.ts';
import { RealtimeQuery } from '../../../modalities/realtime/request.ts';
import { prepareStream } from '../../../modalities/realtime/service.ts';
import { RealtimeSession } from '../../../modalities/realtime/session.ts';
import { modelHeaders } from '../../../pipeline/headers.ts';
import type { ModalityDeps } from '../../../pipeline/priced.ts';
import { meteredContext } from '../../../pipeline/record.ts';
import { describeError } from '../../errors.ts';

/** How long the provider may take, after the stream is closed, to send its last results and summary. */
const CLOSE_TIMEOUT_MS = 10_000;

/** `GET /v1/realtime`: live transcription over a WebSocket (the upgrade plumbing is src/http/websocket.ts). */
export const realtimeRoutes =
  (deps: ModalityDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    const sessions = new Set<RealtimeSession>();
    app.addHook('preClose', async () => {
      await Promise.all([...sessions].map((session) => session.shutdown()));
    });

    app.get(
      '/realtime',
      { config: { webSocket: true }, schema: { querystring: RealtimeQuery } },
      async (request, reply) => {
        // Browsers cannot send headers on a WebSocket: the tag may come as a query parameter instead.
        const given = request.headers['x-gw-tag'] ?? request.query.tag;
        if (!isValidTag(given)) {
          throw new RequestRefused('invalid', "'x-gw-tag': 1 to 128 printable characters");
        }
        const sub = request.auth.subAccountId ? live.subAccount(request.auth.subAccountId) : undefined;
        const log = (error: unknown, message: string) => request.log.error({ err: error }, message);
        const tag = requestTag(given, sub?.defaultTag ?? null);
        // A stream refused before it opens (402, the provider's refusal) is recorded as the failure it was.
        const context = meteredContext({
          auth: request.auth,
          requestId: request.id,
          tag,
          ...(request.requestLog && { log: request.requestLog }),
          signal: app.webSockets.closed(request),
        });
        const prepared = await prepareStream(deps, context, request.query, log);
        let client: WebSocket;
        try {
          client = await app.webSockets.accept(request, reply, modelHeaders(prepared.model));
        } catch {
          prepared.upstream.terminate();
          await prepared.holds.finish(0);
          return;
        }
        const session = new RealtimeSession({
          client,
          upstream: prepared.upstream,
          adapter: prepared.adapter,
          holds: prepared.holds,
          modelId: prepared.model.id,
          meter: prepared.meter,
          closeTimeoutMs: CLOSE_TIMEOUT_MS,
          log,
          describeError,
        });
        sessions.add(session);
        void session.done.then(() => sessions.delete(session));
      },
    );
  };
