import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type pg from 'pg';
import { z } from 'zod';
import { NANOS_PER_CENT } from '../../../../events/money.ts';
import { balanceNanos } from '../../../../projections/balances/index.ts';

export const Balance = z.object({ cents: z.number().int(), usd: z.number() });

/** Whole cents never round up: the balance shown is never more than the money held. */
export function toBalance(nanos: bigint): z.infer<typeof Balance> {
  const cents = nanos >= 0n ? nanos / NANOS_PER_CENT : -((-nanos + NANOS_PER_CENT - 1n) / NANOS_PER_CENT);
  return { cents: Number(cents), usd: Number(cents) / 100 };
}

export const balanceRoutes =
  (pool: pg.Pool): FastifyPluginAsyncZod =>
  async (app) => {
    app.get('/balance', { schema: { response: { 200: Balance } } }, async (request) =>
      toBalance((await balanceNanos(pool, request.auth.accountId)) ?? 0n),
    );
  };
