import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import type { AccountService } from '../accounts/service.ts';
import { adminAccountRoutes } from './routes/admin/accounts.ts';
import { balanceRoutes } from './routes/v1/balance.ts';

export interface RouteDeps {
  pool: pg.Pool;
  accounts: AccountService;
}

/** Paths to handlers, and which credential each prefix demands. */
export async function registerRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', v1.requireApiKey);
      await v1.register(balanceRoutes(deps.pool));
    },
    { prefix: '/v1' },
  );
  await app.register(
    async (admin) => {
      admin.addHook('onRequest', admin.requireAdmin);
      await admin.register(adminAccountRoutes(deps.accounts));
    },
    { prefix: '/admin' },
  );
}
