import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { type JobProviders, jobProviderEnv, startJobProviders } from '../upstreams/jobs.ts';

/** A gateway for clients written against the official SDKs: a funded account, and 3D jobs that stay running. */
export interface SdkWorld {
  gateway: TestGateway;
  providers: JobProviders;
  key: string;
  accountId: string;
  close(): Promise<void>;
}

export async function startSdkWorld(): Promise<SdkWorld> {
  const providers = await startJobProviders();
  // Jobs stay in progress until cancelled, so that the clients' DELETE /v1/jobs/{id} has something to cancel.
  providers.pendingPolls = 1_000_000;
  const gateway = await startTestGateway(
    { ...jobProviderEnv(providers.url), GATEWAY_UPSTREAM_TIMEOUT_MS: '5000' },
    // Batches stay validating: a client's cancel finds them in progress.
    { workerIntervalsMs: { batches: 600_000, jobs: 50 } },
  );
  const account = await json(await gateway.admin('/accounts', { name: 'python' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'funding' });
  return {
    gateway,
    providers,
    key: account.key,
    accountId: account.account_id,
    async close() {
      await gateway.close();
      await providers.close();
    },
  };
}
