import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { JobCommands } from '../../commands/job/handler.ts';
import { parseAs } from '../../events/index.ts';
import type { JobEvent, JobQueued } from '../../events/job.ts';
import { jobStream } from '../../events/job.ts';
import type { EventStore } from '../../events/store.ts';
import type { KeyHolder } from '../accounts/live-state.ts';
import { permitModel } from '../accounts/model-access.ts';
import type { OwnKey } from '../accounts/provider-key-store.ts';
import type { Spending } from '../billing/spending.ts';
import type { Catalog, CatalogModel } from '../catalog/types.ts';
import { unitLine } from '../catalog/unit-models.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { JobAdapter, JobInput } from '../contracts/jobs.ts';
import type { PriceLine } from '../contracts/money.ts';
import { type EndpointSpec, type ModalityTarget, resolveModalityModel } from '../modalities/models.ts';
import { allowPrivateUrls, checkRemoteUrl, UrlRefused } from '../net/url-guard.ts';
import { type DeferredWork, queueDeferred } from '../pipeline/deferred.ts';
import type { OwnKeys } from '../pipeline/own-key.ts';
import type { RequestContext } from '../pipeline/priced.ts';
import type { CredentialPools } from '../providers/credentials/pool.ts';
import { checkWebhookUrl } from '../webhooks/url.ts';
import type { JobKind } from './kinds.ts';

export interface JobsDeps {
  store: EventStore;
  commands: JobCommands;
  spending: Spending;
  catalog: Catalog;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  clock: () => Date;
  /** The providers' credential pools: a job is submitted on the pool's draw and kept on that credential. */
  credentials?: CredentialPools;
  /** The provider keys accounts bring: a job is submitted on its requester's own first (src/jobs/credential.ts). */
  ownKeys?: JobOwnKeys;
}

/** The provider keys accounts bring, as jobs ask them: the requester's for a provider, then the very key by id. */
export interface JobOwnKeys extends OwnKeys {
  ownKeyById(holder: Pick<KeyHolder, 'accountId' | 'subAccountId'>, id: string): OwnKey | undefined;
}

export type QueuedJob = z.infer<typeof JobQueued>;

/** A job as folded from its stream: the submission and every step since. */
export interface JobHistory {
  queued: QueuedJob;
  events: { event: JobEvent; at: Date }[];
}

export type Target = ModalityTarget<JobAdapter>;

/** The kind as an endpoint of the modality layer: its models, adapters and price, and what else it refuses. */
export function jobEndpoint(kind: JobKind): EndpointSpec<JobAdapter> {
  return {
    path: kind.path,
    modality: kind.catalogModality,
    adapterOf: (model) => kind.adapterOf(model),
    unpriced: (model) =>
      kind.refuse?.(model) ??
      (model.prices.perUnitNanos?.[kind.unit] === undefined
        ? `has no ${kind.unit} price, so it cannot be billed`
        : undefined),
  };
}

/** The model a job names (or the kind's default), with where to reach it; refusals name what to do. */
export function resolveJobModel(
  deps: Pick<JobsDeps, 'catalog' | 'env' | 'timeoutMs'>,
  kind: JobKind,
  id: string | undefined,
): Target {
  return resolveModalityModel(deps, jobEndpoint(kind), id ?? kind.defaultModel);
}

/** The price lines of `units` of the kind's unit on the model (resolveJobModel refused a model without that price). */
export function unitLines(model: CatalogModel, unit: string, units: number): PriceLine[] {
  const price = model.prices.perUnitNanos?.[unit];
  if (price === undefined) throw new Error(`${model.id} has no ${unit} price`);
  return [unitLine(unit, units, price)];
}

/** Accepts a job: checks it, holds its worst case, and queues it. The worker takes it from there. */
export async function submitJob(
  deps: JobsDeps,
  context: RequestContext,
  kind: JobKind,
  body: JobInput & { model?: string; webhook_url?: string },
): Promise<JobAccepted> {
  const target = resolveJobModel(deps, kind, body.model);
  permitModel(deps.spending.allowedModels(context.auth), target.model.id, {
    ...(body.model && { named: body.model }),
  });
  if (body.webhook_url) await checkWebhookUrl(body.webhook_url, deps.env);
  if (body.image_url) {
    try {
      await checkRemoteUrl(body.image_url, allowPrivateUrls(deps.env));
    } catch (error) {
      if (error instanceof UrlRefused) throw new RequestRefused('invalid', `'image_url': ${error.message}`);
      throw error;
    }
  }
  const { model: _model, webhook_url: webhookUrl, ...input } = body;
  return queueJob(deps, context, kind, target, newJobId(), input, webhookUrl);
}

export interface JobAccepted {
  id: string;
  status: 'queued';
  object: 'job';
}

export const newJobId = () => `job_${randomUUID().replaceAll('-', '')}`;

/** Holds the job's worst case and records it queued, the hold with it (a failure to record releases the hold). */
export async function queueJob(
  deps: JobsDeps,
  context: RequestContext,
  kind: JobKind,
  target: Target,
  jobId: string,
  input: JobInput,
  webhookUrl: string | undefined,
): Promise<JobAccepted> {
  const work = workOf(kind, target.model);
  return queueDeferred(deps.spending, context, work, target.adapter.heldUnits(input), async (hold) => {
    await deps.commands.handle(
      jobId,
      {
        type: 'QueueJob',
        job: {
          jobId,
          accountId: context.auth.accountId,
          subAccountId: context.auth.subAccountId,
          keyId: context.auth.keyId,
          tag: context.tag,
          modality: kind.modality,
          model: target.model.id,
          provider: target.model.provider,
          input: input as Record<string, unknown>,
          webhookUrl: webhookUrl ?? null,
          holdId: hold.holdId,
          requestId: context.requestId,
          heldNanos: hold.grantedNanos.toString(),
        },
      },
      { now: deps.clock(), correlationId: context.requestId },
    );
    return { id: jobId, status: 'queued', object: 'job' } as const;
  });
}

/** The job as the pipeline's deferred call sees it: its model, and what its units cost there (a pure rule). */
export function workOf(kind: JobKind, model: CatalogModel): DeferredWork {
  return { model, lines: (units) => linesOf(kind, model, units) };
}

/** What `units` of the job cost on the model: the kind's own rule, or units × the per-unit price. */
export function linesOf(kind: JobKind, model: CatalogModel, units: number): PriceLine[] {
  return kind.lines?.(model, units) ?? unitLines(model, kind.unit, units);
}

/** The job's stream, folded; undefined when there is no such job. */
export async function readJob(store: EventStore, jobId: string): Promise<JobHistory | undefined> {
  if (!/^job_[0-9a-f]{32}$/.test(jobId)) return undefined;
  const stored = await store.readStream(jobStream(jobId));
  const events = stored.flatMap((s) => {
    const event = parseAs<JobEvent>(s);
    return event ? [{ event, at: s.occurredAt }] : [];
  });
  const first = events[0]?.event;
  if (first?.type !== 'JobQueued') return undefined;
  return { queued: first.data, events };
}

/** Whether the key may see the job: the account's main key sees all its jobs, a sub-account key only its own. */
export function mayRead(auth: KeyHolder, job: QueuedJob): boolean {
  if (auth.accountId !== job.accountId) return false;
  return auth.subAccountId === null || auth.subAccountId === job.subAccountId;
}
