import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import type { LiveAccounts } from '../accounts/live-state.ts';
import type { AccountService } from '../accounts/service.ts';
import type { SubAccounts } from '../accounts/sub-accounts.ts';
import type { Spending } from '../billing/spending.ts';
import type { ChatDeps } from '../chat/dispatch.ts';
import type { BlobStore } from '../files/blob-store.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import type { MediaUrls } from '../media/signed-urls.ts';
import { rateLimitHook, requireMainKey } from './limits.ts';
import { adminAccountRoutes } from './routes/admin/accounts.ts';
import { mediaRoutes } from './routes/media.ts';
import { balanceRoutes } from './routes/v1/balance.ts';
import { budgetRoutes } from './routes/v1/budgets.ts';
import { chatRoutes } from './routes/v1/chat.ts';
import { embeddingsRoutes } from './routes/v1/embeddings.ts';
import { healthRoutes } from './routes/v1/health.ts';
import { messagesRoutes } from './routes/v1/messages.ts';
import { modelRoutes } from './routes/v1/models.ts';
import { moderationsRoutes } from './routes/v1/moderations.ts';
import { rerankRoutes } from './routes/v1/rerank.ts';
import { subAccountRoutes } from './routes/v1/sub-accounts.ts';
import { usageRoutes } from './routes/v1/usage.ts';

export interface RouteDeps {
  pool: pg.Pool;
  live: LiveAccounts;
  accounts: AccountService;
  subAccounts: SubAccounts;
  spending: Spending;
  limiter: RateLimiter;
  chat: ChatDeps;
  /** Stored bytes: uploads, job results, generated media. */
  blobs: BlobStore;
  /** Signs URLs on the media host for stored bytes. */
  media: MediaUrls;
}

/** Paths to handlers, and which credential each prefix demands. */
export async function registerRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', v1.requireApiKey);
      v1.addHook('onRequest', rateLimitHook(deps.limiter, deps.live));
      v1.addHook('onRequest', requireMainKey);
      await v1.register(balanceRoutes(deps.pool, deps.live));
      await v1.register(chatRoutes(deps.chat, deps.live));
      await v1.register(messagesRoutes(deps.chat, deps.live));
      await v1.register(embeddingsRoutes(deps.chat, deps.live));
      await v1.register(moderationsRoutes(deps.chat, deps.live));
      await v1.register(rerankRoutes(deps.chat, deps.live));
      await v1.register(healthRoutes(deps.chat.health));
      await v1.register(
        modelRoutes(deps.chat.catalog, deps.chat.env, () => deps.chat.env.GATEWAY_URL || app.listeningOrigin),
      );
      await v1.register(subAccountRoutes(deps.subAccounts, deps.pool));
      await v1.register(budgetRoutes(deps.accounts, deps.pool));
      await v1.register(usageRoutes(deps.pool, deps.live));
    },
    { prefix: '/v1' },
  );
  await app.register(mediaRoutes(deps.blobs, deps.media), { prefix: '/media' });
  await app.register(
    async (admin) => {
      admin.addHook('onRequest', admin.requireAdmin);
      await admin.register(adminAccountRoutes(deps.accounts));
    },
    { prefix: '/admin' },
  );
}
