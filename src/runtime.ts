import type { FastifyInstance } from 'fastify';
import { BudgetLedger } from '../commands/budget/handler.ts';
import { JobCommands } from '../commands/job/handler.ts';
import type { EventStore } from '../events/store.ts';
import { START } from '../events/store.ts';
import { fileDeleted } from '../projections/files/index.ts';
import { projections } from '../projections/index.ts';
import { allInstancesReached, InstancePositions } from './accounts/instance-positions.ts';
import { postgresLiveSnapshots } from './accounts/live-snapshot.ts';
import { LiveAccounts } from './accounts/live-state.ts';
import { NamedKeys } from './accounts/named-keys.ts';
import { OperatorCredentialStore } from './accounts/operator-credential-store.ts';
import { OperatorCredentials } from './accounts/operator-credentials.ts';
import { ProviderKeyStore } from './accounts/provider-key-store.ts';
import { ProviderKeys } from './accounts/provider-keys.ts';
import { secretBoxOf } from './accounts/secret-box.ts';
import { AccountService, type IssuedKey } from './accounts/service.ts';
import { SubAccounts } from './accounts/sub-accounts.ts';
import { refuseUnbatchable } from './batches/admit.ts';
import { BatchService } from './batches/service.ts';
import { batchSettings } from './batches/settings.ts';
import { BatchWorker, batchConcurrency } from './batches/worker.ts';
import { RequestBodies } from './billing/request-bodies.ts';
import { Spending } from './billing/spending.ts';
import { openResponseCache } from './cache/open.ts';
import { buildCatalog, type CatalogSource } from './catalog/index.ts';
import type { Config } from './config.ts';
import { registerDashboard } from './dashboard/index.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { type Database, openDatabase } from './db/database.ts';
import { EvalQuality } from './evals/quality.ts';
import { EvalService } from './evals/service.ts';
import { EvalWorker, evalConcurrency } from './evals/worker.ts';
import { openEventStore } from './eventstore/open.ts';
import { openBlobStore } from './files/open-blob-store.ts';
import { FilesService, maxFileBytes } from './files/service.ts';
import { loadOrCreateAdminToken } from './http/admin-token.ts';
import { buildApp } from './http/app.ts';
import { describeError } from './http/errors.ts';
import type { JobRouteDeps } from './http/routes/v1/jobs.ts';
import { trackTraffic } from './http/traffic.ts';
import { startJobWorker } from './jobs/loop.ts';
import { transcriptionKind } from './jobs/transcription.ts';
import { jobSource, notifyJobEnded } from './jobs/webhook.ts';
import { openRateLimiter } from './limits/open.ts';
import { registerMcp } from './mcp/index.ts';
import { MediaUrls } from './media/signed-urls.ts';
import { allowPrivateUrls } from './net/url-guard.ts';
import { CardTopUps, stripeSettings } from './payments/stripe.ts';
import { rebuildProjection } from './projections/rebuild.ts';
import { ProjectionRunner } from './projections/runner.ts';
import { ensureProjectionTables } from './projections/tables.ts';
import { openCredentialPools } from './providers/credentials/open.ts';
import { seedCredentialSpend } from './providers/credentials/spend-seed.ts';
import { ProviderHealth } from './providers/health.ts';
import { ModelListPoller, modelListIntervalMs } from './providers/model-lists.ts';
import { attachOfferedModels, OfferedModels } from './providers/offered-models.ts';
import { apiKeyOf } from './providers/registry.ts';
import { Reconciler } from './reconciliation/reconciler.ts';
import { reconcileSettings } from './reconciliation/settings.ts';
import { requestLogReader } from './replays/request-log.ts';
import { ReplayService } from './replays/service.ts';
import { ShadowWorker } from './replays/shadow.ts';
import { SHADOW_DEFAULTS } from './replays/types.ts';
import { startRetentionWorker } from './requests/retention.ts';
import { Router } from './routing/router.ts';
import { warmTokenizer } from './tokens/count.ts';
import { CatalogChanges } from './webhooks/catalog-changes.ts';
import { recordCredentialRefusals } from './webhooks/credential-refusals.ts';
import { Webhooks } from './webhooks/service.ts';
import { startWebhookWorker } from './webhooks/worker.ts';
import { startWorkers } from './workers/index.ts';

export interface Runtime {
  app: FastifyInstance;
  database: Database;
  store: EventStore;
  live: LiveAccounts;
  runner: ProjectionRunner;
  accounts: AccountService;
  spending: Spending;
  /** Signed webhook deliveries: `webhooks.request(...)`, `webhooks.statusOf(source)`, `webhooks.secrets`. */
  webhooks: Webhooks;
  /** Asks the providers which models their keys can use: `modelLists.refresh()` runs a round now. */
  modelLists: ModelListPoller;
  adminToken: string;
  /** The demo account made on an empty embedded data directory, with its key (shown once). */
  demo: IssuedKey | undefined;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  log: (line: string) => void;
  /** The clock of every decision (tests move it across month boundaries). */
  clock?: () => Date;
  /** Where the model catalog comes from (tests give a small price list); the bundled one by default. */
  catalog?: CatalogSource;
  /** How often the background workers look for due work. */
  workerIntervalsMs?: {
    expiry?: number;
    summary?: number;
    jobs?: number;
    webhooks?: number;
    batches?: number;
    evals?: number;
    reconcile?: number;
  };
}

/** Opens the stores, starts the projections and the in-memory state, and builds the HTTP app (not listening). */
export async function startRuntime(config: Config, options: RuntimeOptions): Promise<Runtime> {
  const clock = options.clock ?? (() => new Date());
  // Read before anything is opened, so that a bad value stops the start with nothing to close.
  const modelListInterval = modelListIntervalMs(config.env);
  const embedded = !config.databaseUrl;
  const unlock = embedded ? await lockDataDir(config.dataDir) : async () => {};
  const database = await openDatabase(config, { whenRunning: 'restart', log: options.log });
  const store = await openEventStore(config, database);
  for (const stale of await ensureProjectionTables(database.pool, projections)) {
    options.log(`read model ${stale.name} changed shape: rebuilding it from the log`);
    await rebuildProjection(database.pool, store, stale);
  }
  const runner = new ProjectionRunner({
    pool: database.pool,
    store,
    projections,
    onError: (name, error) => options.log(`projection ${name} failed, retrying: ${String(error)}`),
  });
  runner.start();
  const live = new LiveAccounts(store, postgresLiveSnapshots(database.pool, store, options.log), clock);
  await live.start((error) => options.log(`live state subscription failed, retrying: ${String(error)}`));
  const positions = new InstancePositions(database.pool, live, (error) =>
    options.log(`reporting the live state's position failed: ${String(error)}`),
  );
  await positions.start();
  // A key's or a sub-account's change answers once every running instance applies it: the next request,
  // anywhere, is decided by it.
  const everywhere = async (checkpoint: string) => {
    await live.waitFor(checkpoint);
    if (!(await allInstancesReached(database.pool, store, checkpoint)))
      options.log(`an instance has not applied the change at ${checkpoint} within 5 s; answering anyway`);
  };
  const keys = new NamedKeys(store, async (keyId) => live.key(keyId), everywhere, clock);
  // One writer per budget stream in the process: spending and the operator's adjustments share it.
  const ledger = new BudgetLedger(store, clock);
  const accounts = new AccountService(
    store,
    async (keyId) => live.keyOwner(keyId),
    (checkpoint) => live.waitFor(checkpoint),
    clock,
    ledger,
  );
  const adminToken = await loadOrCreateAdminToken(config.adminToken, config.dataDir);
  // Webhook secrets and media URLs outlive an admin token's rotation when a signing secret is set.
  const signingSecret = config.signingSecret ?? adminToken;
  const webhooks = new Webhooks(store, signingSecret, database.pool, clock);

  let demo: IssuedKey | undefined;
  if (
    embedded &&
    config.eventStore === 'postgres' &&
    (await store.readAll(START, { maxCount: 1 })).length === 0
  ) {
    const credit =
      config.demoCreditCents > 0 ? { cents: config.demoCreditCents, reference: 'demo-credit' } : undefined;
    demo = await accounts.createAccount('demo', undefined, credit);
  }

  const spending = new Spending(ledger, live, clock, { leases: config.spendLeases });
  const subAccounts = new SubAccounts(store, live, database.pool, clock, everywhere);
  const limiter = openRateLimiter(config.redisUrl, () => clock().getTime());
  const reconciler = new Reconciler(
    store,
    database.pool,
    reconcileSettings(config.env, config.pools),
    clock,
    config.operatorAccountId,
  );
  const workers = startWorkers({
    pool: database.pool,
    spending,
    accounts,
    reconciler,
    reconcileIntervalMs: options.workerIntervalsMs?.reconcile,
    clock,
    log: options.log,
    expiryIntervalMs: options.workerIntervalsMs?.expiry,
    summaryIntervalMs: options.workerIntervalsMs?.summary,
  });
  const webhookWorker = startWebhookWorker({
    pool: database.pool,
    webhooks,
    clock,
    allowPrivate: allowPrivateUrls(config.env),
    log: options.log,
    intervalMs: options.workerIntervalsMs?.webhooks,
  });
  // The tokenizer's rank table takes ~200 ms to load: paid here at start, not by the first request's neighbours.
  warmTokenizer();
  const catalog = buildCatalog(options.catalog);
  // What each configured provider's own model list offers decides availability (docs/providers.md).
  const offered = new OfferedModels();
  attachOfferedModels(config.env, offered);
  const catalogChanges = new CatalogChanges(store, catalog, offered);
  const modelLists = new ModelListPoller({
    env: config.env,
    providers: catalog.providers(),
    offered,
    clock,
    intervalMs: modelListInterval,
    // Models added or deprecated since the last start, or by a provider's list since its last answer, become
    // model.added / model.deprecated webhooks.
    onChange: async () => void (await catalogChanges.record(clock())),
    log: options.log,
  });
  await modelLists.start();
  const health = new ProviderHealth();
  health.reportModelLists(offered);
  const secrets = secretBoxOf(config.env.GATEWAY_SECRETS_KEY, config.env.GATEWAY_SECRETS_KEY_PREVIOUS);
  const credentials = openCredentialPools(config, clock, options.log);
  recordCredentialRefusals(credentials, store, config.operatorAccountId, options.log);
  // Credentials the operator added through the admin API, after the config file's (docs/providers.md#key-pools).
  const operatorCredentials = new OperatorCredentials({
    store,
    table: new OperatorCredentialStore(database.pool, secrets),
    pools: credentials,
    live,
    providers: () => catalog.providers().filter((provider) => provider !== 'local'),
    configured: (provider) => apiKeyOf(provider, config.env) !== undefined,
    afterWrite: (checkpoint) => live.waitFor(checkpoint),
    clock,
    log: options.log,
  });
  const added = await operatorCredentials.start();
  await seedCredentialSpend(credentials, database.pool, clock(), options.log, added);
  health.reportCredentials(credentials);
  // Provider keys accounts bring: sealed under GATEWAY_SECRETS_KEY in a table of their own (docs/providers.md).
  const providerKeys = new ProviderKeys(
    store,
    new ProviderKeyStore(database.pool, secrets),
    live,
    () => catalog.providers().filter((provider) => provider !== 'local'),
    everywhere,
    clock,
  );
  await providerKeys.start(options.log);
  const chat = {
    spending,
    catalog,
    env: config.env,
    health,
    credentials,
    ownKeys: providerKeys,
    timeoutMs: config.upstreamTimeoutMs,
    maxRetryWaitMs: config.maxRetryWaitMs,
    fallbacks: config.fallbacks,
    router: new Router({
      catalog,
      env: config.env,
      health,
      operator: config.routing,
      account: (accountId) => live.account(accountId)?.routing ?? undefined,
      subAccount: (subAccountId) => live.subAccount(subAccountId)?.allowedModels ?? null,
      // An account's own completed evals override the public quality prior.
      quality: new EvalQuality(database.pool, clock),
    }),
  };
  const cache = await openResponseCache(
    {
      ...config.cache,
      redisUrl: config.redisUrl,
      accountDefault: (accountId) => live.account(accountId)?.cacheDefault,
    },
    database.pool,
    store,
    chat,
    options.log,
    clock,
  );
  const blobs = openBlobStore(config);
  const requestBodies = new RequestBodies(
    database.pool,
    (accountId) => (live.account(accountId)?.requestBodies ?? config.requestBodies) === 'keep',
    (error) => options.log(`storing a request body failed: ${(error as Error).message}`),
  );
  await requestBodies.init();
  const retention = startRetentionWorker({
    sql: database.pool,
    blobs,
    store,
    retentionDays: config.requestRetentionDays,
    overrides: () => live.retentionOverrides(),
    clock,
    log: options.log,
  });
  // Read when a URL is signed, once the app listens (a test gateway's port is chosen at listen).
  const mediaBase = () => config.mediaUrl ?? `${config.env.GATEWAY_URL || app.listeningOrigin}/media`;
  const media = new MediaUrls(signingSecret, mediaBase, clock);
  const files = new FilesService(
    store,
    database.pool,
    blobs,
    maxFileBytes(config.env),
    clock,
    config.storageQuotaBytes,
  );
  const jobs: JobRouteDeps = {
    store,
    commands: new JobCommands(store),
    spending,
    catalog: chat.catalog,
    env: config.env,
    timeoutMs: config.upstreamTimeoutMs,
    clock,
    credentials,
    ownKeys: providerKeys,
    media,
    blobs,
    extraKinds: { transcription: transcriptionKind },
    webhookDelivered: async (jobId) => (await webhooks.statusOf(jobSource(jobId)))?.status === 'delivered',
    onEnded: (jobId) => notifyJobEnded({ store, media }, webhooks, jobId),
    fileDeleted: (fileId) => fileDeleted(database.pool, fileId),
  };
  const jobWorker = startJobWorker(
    {
      ...jobs,
      pool: database.pool,
      log: options.log,
      files,
      describeError,
    },
    options.workerIntervalsMs?.jobs ?? 2000,
  );
  const batchConfig = batchSettings(config.env);
  const batches = new BatchService(store, database.pool, files, clock, (fileId, endpoint) =>
    refuseUnbatchable({ blobs, catalog, env: config.env, settings: batchConfig }, fileId, endpoint),
  );
  const batchWorker = new BatchWorker({
    pool: database.pool,
    store,
    blobs,
    files,
    chat,
    ownKeys: providerKeys,
    clock,
    log: options.log,
    intervalMs: options.workerIntervalsMs?.batches ?? 2000,
    concurrency: batchConcurrency(config.env),
    describeError,
    settings: batchConfig,
    bodies: requestBodies,
  });
  batchWorker.start();
  const replayLog = requestLogReader(database.pool, blobs);
  const replays = new ReplayService({
    store,
    sql: database.pool,
    chat,
    log: replayLog,
    clock,
    describeError,
  });
  // Bound to the HTTP server once it exists (below); until then nothing is being served.
  let serving = () => false;
  const shadowWorker = new ShadowWorker({
    store,
    pool: database.dedicatedPool(SHADOW_DEFAULTS.concurrency),
    chat,
    log: replayLog,
    commands: replays.commands,
    clock,
    report: (message, error) => options.log(error === undefined ? message : `${message}: ${String(error)}`),
    busy: () => serving(),
  });
  shadowWorker.start();
  let evalWorker: EvalWorker | undefined;
  const evals = new EvalService({
    store,
    sql: database.pool,
    chat,
    clock,
    nudge: () => evalWorker?.nudge(),
  });
  evalWorker = new EvalWorker({
    pool: database.pool,
    store,
    chat,
    spending,
    bodies: requestBodies,
    log: replayLog,
    commands: evals.commands,
    clock,
    report: options.log,
    intervalMs: options.workerIntervalsMs?.evals ?? 1000,
    concurrency: evalConcurrency(config.env),
    describeError,
  });
  evalWorker.start();
  const app = await buildApp({
    webhooks,
    chat: { ...chat, cache },
    blobs,
    media,
    jobs,
    files,
    batches,
    replays,
    evals,
    pool: database.pool,
    live,
    accounts,
    keys,
    providerKeys,
    operatorCredentials,
    subAccounts,
    spending,
    requestBodies,
    reconciler,
    limiter,
    adminToken,
    previousAdminToken: config.adminTokenPrevious,
    logLevel: config.logLevel,
    ops: { probe: { sql: database.pool, store, projections }, limiter },
    edge: config.edge,
  });
  await registerMcp(app, { config, live, blobs, media, log: options.log });
  await registerDashboard(app, {
    ...{ pool: database.pool, store, live, accounts, subAccounts, replays, evals, webhooks, blobs, chat },
    keys,
    requestBodies,
    cardTopUps: new CardTopUps(stripeSettings(config.env), accounts),
    projections,
    adminToken,
    env: config.env,
    clock,
  });
  serving = trackTraffic(app.server);
  return {
    app,
    database,
    store,
    live,
    runner,
    accounts,
    adminToken,
    demo,
    spending,
    webhooks,
    modelLists,
    async close() {
      await closeHttp(app);
      await requestBodies.drain();
      await spending.returnLeases();
      retention.stop();
      await modelLists.stop();
      await workers.stop();
      await batchWorker.stop();
      await shadowWorker.stop();
      await evalWorker.stop();
      await webhookWorker.stop();
      await jobWorker.stop();
      await limiter.close();
      await cache.close();
      await runner.stop();
      await positions.stop();
      await live.stop();
      await store.close();
      await database.close();
      await unlock();
    },
  };
}

/**
 * Stops accepting, lets requests in progress finish, then closes. Keep-alive connections that fall idle after
 * the close began are closed as they do (Node closes only those idle at the start); anything still open after
 * the grace period is cut.
 */
async function closeHttp(app: FastifyInstance, graceMs = 10_000): Promise<void> {
  const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
  const cut = setTimeout(() => app.server.closeAllConnections(), graceMs);
  try {
    await app.close();
  } finally {
    clearInterval(sweep);
    clearTimeout(cut);
  }
}
