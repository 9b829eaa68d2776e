import type { FastifyPluginAsync } from 'fastify';
import type { CardTopUps } from '../payments/stripe.ts';

/**
 * `POST /webhooks/stripe`: Stripe's events, verified on the raw body (a parsed and re-serialized body would not
 * match the signature). Answers 200 once the event is recorded or knowingly ignored, also when it names a session,
 * charge or account that does not exist (logged as a warning: Stripe would otherwise redeliver it for days); a bad
 * signature is a 400 that records nothing; a failure to reach Stripe is a 502, and a database that cannot be reached a
 * 503, so that Stripe delivers the event again.
 */
export const stripeWebhookRoute =
  (cardTopUps: CardTopUps): FastifyPluginAsync =>
  async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_request, body, done) =>
      done(null, body),
    );
    app.post('/webhooks/stripe', async (request) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const signature = request.headers['stripe-signature'];
      const outcome = await cardTopUps.handleWebhook(
        raw,
        typeof signature === 'string' ? signature : undefined,
        request.id,
      );
      if (outcome.handled === 'ignored' && outcome.unknown)
        request.log.warn(
          { stripe: outcome, ...outcome.unknown },
          'stripe webhook about something that does not exist: acknowledged, nothing credited',
        );
      else request.log.info({ stripe: outcome }, 'stripe webhook');
      return { received: true, ...outcome };
    });
  };
