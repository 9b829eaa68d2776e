import { createRequire } from 'node:module';
import type Stripe from 'stripe';
import { DomainError } from '../../commands/errors.ts';
import type { AccountService } from '../accounts/service.ts';
import { RequestRefused } from '../contracts/errors.ts';

/** A card top-up's bounds, in whole cents: $5 to $10,000 (Stripe's own minimum for USD is $0.50). */
export const TOP_UP_MIN_CENTS = 500;
export const TOP_UP_MAX_CENTS = 1_000_000;

/** Stripe's tolerance for a signature's age, in seconds (the SDK's default, stated here on purpose). */
const SIGNATURE_TOLERANCE_S = 300;

export interface StripeSettings {
  secretKey: string | undefined;
  webhookSecret: string | undefined;
  /** The API's base URL; Stripe's own unless set (tests and self-hosters point it at a stand-in). */
  apiBase: string | undefined;
}

export function stripeSettings(env: NodeJS.ProcessEnv): StripeSettings {
  return {
    secretKey: env.STRIPE_SECRET_KEY || undefined,
    webhookSecret: env.STRIPE_WEBHOOK_SECRET || undefined,
    apiBase: env.STRIPE_API_BASE || undefined,
  };
}

/** Dollars as typed (`25`, `25.5`, `25.50`) to whole cents, without a float; undefined when not an amount. */
export function dollarsToCents(typed: string): number | undefined {
  const match = /^\s*\$?\s*(\d{1,9})(?:\.(\d{1,2}))?\s*$/.exec(typed);
  if (!match) return undefined;
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}

/** What an event named that neither Stripe nor this gateway knows. */
export interface UnknownToUs {
  sessionId?: string;
  chargeId?: string;
  accountId?: string;
}

export type WebhookOutcome =
  | { handled: 'credited' | 'already_credited' | 'reversed' | 'already_reversed'; reference: string }
  /**
   * Acknowledged and not acted on. With `unknown`, the event named a session, a charge or an account that does not
   * exist (Stripe's endpoint also sends the events of other integrations on the same Stripe account): a redelivery
   * would find it missing again, so it is acknowledged rather than refused, credits nothing, and is logged as a warning.
   */
  | { handled: 'ignored'; reason: string; unknown?: UnknownToUs };

// The SDK is a few MB of heap: required when a secret key is configured, so that a gateway without card
// top-ups never loads it.
const require = createRequire(import.meta.url);

/**
 * Card top-ups through Stripe Checkout: a Checkout Session per top-up (payment mode, USD, the account as
 * `client_reference_id`), credited from the signed webhook after reading the session back from Stripe, with the
 * session id as the top-up's reference, so that a webhook delivered twice, at once or days later credits once.
 */
export class CardTopUps {
  private readonly stripe: Stripe | undefined;

  constructor(
    private readonly settings: StripeSettings,
    private readonly accounts: AccountService,
  ) {
    if (!settings.secretKey) return;
    const base = settings.apiBase ? new URL(settings.apiBase) : undefined;
    const StripeClient = require('stripe') as typeof Stripe;
    this.stripe = new StripeClient(settings.secretKey, {
      maxNetworkRetries: 2,
      timeout: 20_000,
      telemetry: false,
      ...(base && {
        host: base.hostname,
        port: base.port || (base.protocol === 'http:' ? 80 : 443),
        protocol: base.protocol === 'http:' ? 'http' : 'https',
      }),
    });
  }

  /** Both secrets are needed: one to create sessions, one to trust the webhook that credits them. */
  get configured(): boolean {
    return this.stripe !== undefined && this.settings.webhookSecret !== undefined;
  }

  async startCheckout(
    accountId: string,
    cents: number,
    urls: { success: string; cancel: string },
  ): Promise<{ id: string; url: string }> {
    const stripe = this.client();
    if (!Number.isSafeInteger(cents) || cents < TOP_UP_MIN_CENTS || cents > TOP_UP_MAX_CENTS) {
      throw new RequestRefused(
        'invalid',
        `'amount': a top-up is between $${TOP_UP_MIN_CENTS / 100} and $${TOP_UP_MAX_CENTS / 100}`,
      );
    }
    const session = await upstream(() =>
      stripe.checkout.sessions.create({
        mode: 'payment',
        client_reference_id: accountId,
        metadata: { account_id: accountId },
        payment_intent_data: { metadata: { account_id: accountId } },
        line_items: [
          {
            quantity: 1,
            price_data: {
              currency: 'usd',
              unit_amount: cents,
              product_data: { name: 'Gateway credit' },
            },
          },
        ],
        success_url: urls.success,
        cancel_url: urls.cancel,
      }),
    );
    if (!session.url) throw new RequestRefused('upstream_failed', 'Stripe returned a session without a URL');
    return { id: session.id, url: session.url };
  }

  /** Verifies the signature over the raw body, then acts on the few events that move money. */
  async handleWebhook(
    raw: Buffer,
    signature: string | undefined,
    requestId: string,
  ): Promise<WebhookOutcome> {
    const stripe = this.client();
    const secret = this.settings.webhookSecret;
    if (!secret)
      throw new RequestRefused('not_found', 'Card top-ups are not configured (STRIPE_WEBHOOK_SECRET)');
    if (!signature) throw new RequestRefused('invalid', "'stripe-signature': missing");
    let event: Stripe.Event;
    try {
      event = stripe.webhooks.constructEvent(raw, signature, secret, SIGNATURE_TOLERANCE_S);
    } catch (error) {
      throw new RequestRefused('invalid', `'stripe-signature': ${(error as Error).message}`);
    }
    switch (event.type) {
      case 'checkout.session.completed':
        // A delayed method (a bank debit) completes unpaid; its money arrives with async_payment_succeeded.
        if (event.data.object.payment_status !== 'paid')
          return { handled: 'ignored', reason: 'the session is not paid yet' };
        return this.credit(event.data.object.id, requestId);
      case 'checkout.session.async_payment_succeeded':
        return this.credit(event.data.object.id, requestId);
      case 'charge.refunded':
        return this.reverse(event.data.object.id, requestId);
      default:
        return { handled: 'ignored', reason: `${event.type} moves no money here` };
    }
  }

  /** The session as Stripe holds it now: the webhook's copy is only a hint. */
  private async credit(sessionId: string, requestId: string): Promise<WebhookOutcome> {
    const stripe = this.client();
    const session = await fromStripe(() => stripe.checkout.sessions.retrieve(sessionId));
    if (!session) return unknown(`Stripe has no checkout session ${sessionId}`, { sessionId });
    if (session.mode !== 'payment' || session.payment_status !== 'paid')
      return { handled: 'ignored', reason: `session ${session.id} is not a paid payment` };
    if (session.currency !== 'usd' || !session.amount_total || !session.client_reference_id)
      return { handled: 'ignored', reason: `session ${session.id} is not a USD top-up of an account` };
    const accountId = session.client_reference_id;
    try {
      const result = await this.accounts.topUp(accountId, session.amount_total, session.id, requestId);
      return { handled: result.credited ? 'credited' : 'already_credited', reference: session.id };
    } catch (error) {
      if (!isUnknownAccount(error)) throw error;
      return unknown(`session ${session.id} names account ${accountId}, which this gateway does not have`, {
        sessionId: session.id,
        accountId,
      });
    }
  }

  /** A refund, partial or whole: the charge's refunded total, reversed against its session's top-up. */
  private async reverse(chargeId: string, requestId: string): Promise<WebhookOutcome> {
    const stripe = this.client();
    const charge = await fromStripe(() => stripe.charges.retrieve(chargeId));
    if (!charge) return unknown(`Stripe has no charge ${chargeId}`, { chargeId });
    const paymentIntent =
      typeof charge.payment_intent === 'string' ? charge.payment_intent : charge.payment_intent?.id;
    if (!paymentIntent) return { handled: 'ignored', reason: `charge ${charge.id} has no payment intent` };
    const sessions = await upstream(() =>
      stripe.checkout.sessions.list({ payment_intent: paymentIntent, limit: 1 }),
    );
    const session = sessions.data[0];
    if (!session?.client_reference_id)
      return { handled: 'ignored', reason: `charge ${charge.id} is not a top-up's` };
    const accountId = session.client_reference_id;
    try {
      // A top-up not recorded yet stays a 404, so Stripe redelivers: the refund may have overtaken its credit.
      const { reversed_cents } = await this.accounts.reverseTopUp(
        accountId,
        session.id,
        charge.amount_refunded,
        charge.id,
        requestId,
      );
      return { handled: reversed_cents > 0 ? 'reversed' : 'already_reversed', reference: session.id };
    } catch (error) {
      if (!isUnknownAccount(error)) throw error;
      return unknown(
        `charge ${charge.id} refunds session ${session.id} of account ${accountId}, unknown here`,
        {
          chargeId: charge.id,
          sessionId: session.id,
          accountId,
        },
      );
    }
  }

  private client(): Stripe {
    // Not configured is not a fault of the gateway: the route is as absent as an unknown one.
    if (!this.stripe)
      throw new RequestRefused('not_found', 'Card top-ups are not configured (STRIPE_SECRET_KEY)');
    return this.stripe;
  }
}

/** Stripe's failures as the gateway's: a 502, so that Stripe (or the person paying) tries again. */
async function upstream<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw asUpstreamFailure(error);
  }
}

const asUpstreamFailure = (error: unknown) =>
  error instanceof RequestRefused
    ? error
    : new RequestRefused('upstream_failed', `Stripe: ${(error as Error).message}`);

/**
 * An object read back from Stripe, or undefined when Stripe answers that it has none (404 `resource_missing`): a
 * fact, not a failure, which no redelivery changes. Any other failure is a 502, as `upstream` has it.
 */
async function fromStripe<T>(call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    const { statusCode, code } = error as { statusCode?: unknown; code?: unknown };
    if (statusCode === 404 && code === 'resource_missing') return undefined;
    throw asUpstreamFailure(error);
  }
}

/** The account's stream does not exist: the decider's refusal, as opposed to a store that cannot be reached. */
const isUnknownAccount = (error: unknown) =>
  error instanceof DomainError && error.kind === 'not_found' && error.field === 'account';

const unknown = (reason: string, about: UnknownToUs): WebhookOutcome => ({
  handled: 'ignored',
  reason,
  unknown: about,
});
