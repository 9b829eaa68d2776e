import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import type { LiveAccounts } from '../accounts/live-state.ts';
import type { NamedKeys } from '../accounts/named-keys.ts';
import type { OperatorCredentials } from '../accounts/operator-credentials.ts';
import type { ProviderKeys } from '../accounts/provider-keys.ts';
import type { AccountService } from '../accounts/service.ts';
import type { SubAccounts } from '../accounts/sub-accounts.ts';
import type { BatchService } from '../batches/service.ts';
import type { RequestBodies } from '../billing/request-bodies.ts';
import type { Spending } from '../billing/spending.ts';
import type { ChatDeps } from '../chat/complete.ts';
import type { EvalService } from '../evals/service.ts';
import type { BlobStore } from '../files/blob-store.ts';
import type { FilesService } from '../files/service.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import type { MediaUrls } from '../media/signed-urls.ts';
import type { Reconciler } from '../reconciliation/reconciler.ts';
import type { ReplayService } from '../replays/service.ts';
import type { Webhooks } from '../webhooks/service.ts';
import { evalAliasHook } from './eval-alias.ts';
import { rateLimitHook, requireMainKey } from './limits.ts';
import { requestLogHooks } from './request-log.ts';
import { adminAccountRoutes } from './routes/admin/accounts.ts';
import { adminCredentialRoutes } from './routes/admin/credentials.ts';
import { adminKeyRoutes } from './routes/admin/keys.ts';
import { adminReconciliationRoutes } from './routes/admin/reconciliation.ts';
import { adminViewRoutes } from './routes/admin/views.ts';
import { adminWebhookRoutes } from './routes/admin/webhooks.ts';
import { mediaRoutes } from './routes/media.ts';
import { audioRoutes } from './routes/v1/audio.ts';
import { balanceRoutes } from './routes/v1/balance.ts';
import { batchesRoutes } from './routes/v1/batches.ts';
import { budgetRoutes } from './routes/v1/budgets.ts';
import { cacheRoutes } from './routes/v1/cache.ts';
import { chatRoutes } from './routes/v1/chat.ts';
import { classificationsRoutes } from './routes/v1/classifications.ts';
import { detectionsRoutes } from './routes/v1/detections.ts';
import { embeddingsRoutes } from './routes/v1/embeddings.ts';
import { evalsRoutes } from './routes/v1/evals.ts';
import { filesRoutes } from './routes/v1/files.ts';
import { healthRoutes } from './routes/v1/health.ts';
import { imagesRoutes } from './routes/v1/images.ts';
import { jobListRoutes } from './routes/v1/job-list.ts';
import { type JobRouteDeps, jobRoutes } from './routes/v1/jobs.ts';
import { keyRoutes } from './routes/v1/keys.ts';
import { messagesRoutes } from './routes/v1/messages.ts';
import { modelRoutes } from './routes/v1/models.ts';
import { moderationsRoutes } from './routes/v1/moderations.ts';
import { ocrRoutes } from './routes/v1/ocr.ts';
import { providerKeyRoutes } from './routes/v1/provider-keys.ts';
import { realtimeRoutes } from './routes/v1/realtime.ts';
import { replaysRoutes } from './routes/v1/replays.ts';
import { requestsRoutes } from './routes/v1/requests.ts';
import { rerankRoutes } from './routes/v1/rerank.ts';
import { responsesRoutes } from './routes/v1/responses.ts';
import { routingRoutes } from './routes/v1/routing.ts';
import { subAccountRoutes } from './routes/v1/sub-accounts.ts';
import { translationsRoutes } from './routes/v1/translations.ts';
import { usageRoutes } from './routes/v1/usage.ts';
import { webhookSecretRoutes } from './routes/v1/webhook-secret.ts';

export interface RouteDeps {
  pool: pg.Pool;
  live: LiveAccounts;
  accounts: AccountService;
  /** Named keys of the account and its sub-accounts (`/v1/keys`, `/v1/sub-accounts/{id}/keys`, the admin's). */
  keys: NamedKeys;
  subAccounts: SubAccounts;
  spending: Spending;
  limiter: RateLimiter;
  chat: ChatDeps;
  /** Stored bytes: uploads, job results, generated media. */
  blobs: BlobStore;
  /** Signs URLs on the media host for stored bytes. */
  media: MediaUrls;
  /** Files API: uploads and batch results. */
  files: FilesService;
  batches: BatchService;
  jobs: JobRouteDeps;
  /** Signed webhook deliveries and the per-key signing secrets. */
  webhooks: Webhooks;
  /** Replays of logged requests and live shadows. */
  replays: ReplayService;
  /** Evals of candidate models, and the `eval:<id>` alias for their winners. */
  evals: EvalService;
  /** Where the request log keeps bodies (or only hashes them). */
  requestBodies: RequestBodies;
  /** The providers' cost reports against the ledger (docs/billing.md, Reconciliation). */
  reconciler?: Reconciler;
  /** Provider keys accounts bring (`/v1/provider-keys`; docs/providers.md, Bring your own key). */
  providerKeys?: ProviderKeys;
  /** Credentials the operator adds to the pools at runtime (`/admin/providers/{provider}/credentials`). */
  operatorCredentials?: OperatorCredentials;
}

/** Paths to handlers, and which credential each prefix demands. */
export async function registerRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', v1.requireApiKey);
      v1.addHook('onRequest', rateLimitHook(deps.limiter, deps.live));
      v1.addHook('onRequest', requireMainKey);
      requestLogHooks(v1, deps.requestBodies, deps.spending);
      // After the request log's hook, which keeps the body the client sent.
      v1.addHook('preHandler', evalAliasHook(deps.evals));
      await v1.register(balanceRoutes(deps.pool, deps.subAccounts));
      await v1.register(chatRoutes(deps.chat, deps.live));
      await v1.register(messagesRoutes(deps.chat, deps.live));
      await v1.register(routingRoutes(deps.chat));
      await v1.register(
        responsesRoutes(deps.chat, deps.live, deps.pool, deps.blobs, (sha256s) =>
          deps.requestBodies.forget(sha256s),
        ),
      );
      await v1.register(embeddingsRoutes(deps.chat, deps.live));
      await v1.register(moderationsRoutes(deps.chat, deps.live));
      await v1.register(rerankRoutes(deps.chat, deps.live));
      await v1.register(translationsRoutes(deps.chat, deps.live));
      await v1.register(classificationsRoutes(deps.chat, deps.live));
      await v1.register(detectionsRoutes(deps.chat, deps.live));
      await v1.register(ocrRoutes(deps.chat, deps.live));
      await v1.register(imagesRoutes({ ...deps.chat, blobs: deps.blobs, media: deps.media }, deps.live));
      await v1.register(audioRoutes({ ...deps.chat, blobs: deps.blobs }, deps.live, deps.jobs));
      await v1.register(realtimeRoutes(deps.chat, deps.live));
      await v1.register(jobRoutes(deps.jobs, deps.live));
      await v1.register(jobListRoutes(deps.pool));
      await v1.register(healthRoutes(deps.chat.health));
      await v1.register(
        modelRoutes(
          deps.chat.catalog,
          deps.chat.env,
          () => deps.chat.env.GATEWAY_URL || app.listeningOrigin,
          deps.chat.cache?.describe(),
          (auth) => deps.chat.spending.allowedModels(auth),
        ),
      );
      await v1.register(subAccountRoutes(deps.subAccounts, deps.pool));
      await v1.register(keyRoutes(deps.keys, deps.live, deps.pool));
      if (deps.providerKeys) await v1.register(providerKeyRoutes(deps.providerKeys));
      await v1.register(budgetRoutes(deps.accounts, deps.pool, deps.live));
      await v1.register(usageRoutes(deps.pool, deps.live));
      await v1.register(requestsRoutes(deps.pool, deps.blobs, (keyId) => deps.live.key(keyId)?.name));
      await v1.register(filesRoutes(deps.files));
      await v1.register(batchesRoutes(deps.batches, deps.live));
      await v1.register(replaysRoutes(deps.replays, deps.live));
      await v1.register(evalsRoutes(deps.evals));
      await v1.register(cacheRoutes(deps.chat.cache));
      await v1.register(webhookSecretRoutes(deps.webhooks.secrets));
    },
    { prefix: '/v1' },
  );
  await app.register(mediaRoutes(deps.blobs, deps.media), { prefix: '/media' });
  await app.register(
    async (admin) => {
      admin.addHook('onRequest', admin.requireAdmin);
      await admin.register(adminAccountRoutes(deps.accounts));
      await admin.register(adminKeyRoutes(deps.keys));
      await admin.register(adminViewRoutes(deps.pool));
      if (deps.reconciler) await admin.register(adminReconciliationRoutes(deps.pool, deps.reconciler));
      await admin.register(adminWebhookRoutes(deps.accounts, deps.chat.env));
      if (deps.chat.credentials)
        await admin.register(adminCredentialRoutes(deps.chat.credentials, deps.operatorCredentials));
    },
    { prefix: '/admin' },
  );
}
