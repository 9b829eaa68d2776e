import { allowedText, allowsModel } from '../accounts/model-access.ts';
import type { Catalog, CatalogModel } from '../catalog/types.ts';
import { RequestRefused } from '../contracts/errors.ts';
import { priceCharge } from '../contracts/money.ts';
import type { ProviderHealth } from '../providers/health.ts';
import { offeredModelsOf } from '../providers/offered-models.ts';
import { isAvailable } from '../providers/registry.ts';
import { estimateComplexity } from './complexity.ts';
import { Conversations } from './conversations.ts';
import { CHECKS, has, type RouteAsk } from './fit.ts';
import { type RoutingRestriction, restrictionFilter } from './patterns.ts';
import { figuresAmong, PriorQuality, type QualitySource } from './quality.ts';
import type { Strategy } from './strategy.ts';

/** The output a request is priced on when it names no limit: a typical answer, not the worst case. */
export const EXPECTED_OUTPUT_TOKENS = 500;
/** A provider's latency before the gateway has seen any of its calls. */
export const DEFAULT_LATENCY_MS = 1000;
/** How long the providers' latencies are reused: the health report sorts every provider's window. */
const LATENCY_REFRESH_MS = 250;

export { type RouteAsk, UNKNOWN_CONTEXT_TOKENS, UNKNOWN_OUTPUT_TOKENS } from './fit.ts';

/** The chosen model and the next ones tried when it fails. */
const MAX_ATTEMPTS = 3;

/** One candidate as the router weighed it. */
export interface Scored {
  model: CatalogModel;
  /** This request's price: the counted prompt and the expected output, fee included. */
  priceNanos: bigint;
  latencyMs: number;
  /** The quality source's figure, and the same rescaled to 0..1 among the fitting candidates. */
  rawQuality: number;
  quality: number;
}

export interface RoutingDecision {
  requested: 'auto' | 'auto/text';
  strategy: Strategy;
  chosen: Scored;
  /** The chosen model first, then the fallbacks in the strategy's order. */
  order: CatalogModel[];
  reason: string;
  /** What the saving is counted against: `baseline_model`, else the candidate `quality` would pick. */
  baseline: CatalogModel;
  baselinePriceNanos: bigint;
  complexity: number | null;
  qualitySource: string;
  candidates: Scored[];
  conversation?: string;
}

export interface RouterDeps {
  catalog: Catalog;
  env: NodeJS.ProcessEnv;
  health: ProviderHealth;
  /** The operator's lists (config file). */
  operator?: RoutingRestriction;
  /** An account's own lists (admin API), read per request. */
  account?: (accountId: string) => RoutingRestriction | undefined;
  /** A sub-account's `allowed_models` (null: every model), read per request. */
  subAccount?: (subAccountId: string) => readonly string[] | null;
  quality?: QualitySource;
  now?: () => number;
}

function requestPrice(model: CatalogModel, ask: RouteAsk): bigint {
  const output = (ask.outputLimit ?? EXPECTED_OUTPUT_TOKENS) * ask.choices;
  return priceCharge([
    {
      item: 'input_tokens',
      quantity: ask.inputTokens,
      unitPriceNanosPerMillion: model.prices.inputNanosPerMillion ?? 0n,
    },
    {
      item: 'output_tokens',
      quantity: output,
      unitPriceNanosPerMillion: model.prices.outputNanosPerMillion ?? 0n,
    },
  ]).chargedNanos;
}

const byPrice = (a: Scored, b: Scored) =>
  a.priceNanos < b.priceNanos ? -1 : a.priceNanos > b.priceNanos ? 1 : 0;
const byQuality = (a: Scored, b: Scored) => b.quality - a.quality;
const byId = (a: Scored, b: Scored) => a.model.id.localeCompare(b.model.id);
const then =
  (...orders: ((a: Scored, b: Scored) => number)[]) =>
  (a: Scored, b: Scored) => {
    for (const order of orders) {
      const result = order(a, b);
      if (result !== 0) return result;
    }
    return 0;
  };

/** Each strategy's order of preference (ties broken by the next figure, finally by id, so decisions repeat). */
const ORDERS: Record<Exclude<Strategy, 'auto'>, (a: Scored, b: Scored) => number> = {
  cost: then(byPrice, byQuality, byId),
  speed: then((a, b) => a.latencyMs - b.latencyMs, byPrice, byQuality, byId),
  quality: then(byQuality, byPrice, byId),
};

const usd = (nanos: bigint) => `$${(Number(nanos) / 1e9).toFixed(6)}`;

/**
 * The automatic router: the available chat models that fit a request, weighed by this request's price, the
 * provider's latency and a quality figure, and one chosen by the strategy (x-routing). See docs/routing.md.
 */
export class Router {
  /** The pool, and the version of the providers' model lists it was drawn under. */
  private available: { models: CatalogModel[]; listsVersion: number | undefined } | undefined;
  private readonly conversations: Conversations;
  private readonly quality: QualitySource;
  private readonly operatorAllows: (id: string) => boolean;
  private latencies: { at: number; byProvider: Map<string, number> } | undefined;

  constructor(private readonly deps: RouterDeps) {
    this.conversations = new Conversations(deps.now);
    this.quality = deps.quality ?? new PriorQuality();
    this.operatorAllows = restrictionFilter(deps.operator);
  }

  /**
   * The priced chat models whose provider is configured and offers them (its model list names them, once fetched),
   * that are not deprecated, within the operator's lists. The built-in local models count only while no real
   * provider is configured, so the demo routes but never beside real models. Drawn again when a list changes.
   */
  private pool(): CatalogModel[] {
    const listsVersion = offeredModelsOf(this.deps.env)?.version;
    if (this.available?.listsVersion !== listsVersion) this.available = undefined;
    if (!this.available) {
      const usable = this.deps.catalog
        .list({ modality: 'text' })
        .filter(
          (m) =>
            !m.deprecated &&
            has(m, 'chat') &&
            m.prices.inputNanosPerMillion !== null &&
            m.prices.outputNanosPerMillion !== null &&
            isAvailable(m, this.deps.env),
        );
      const real = usable.filter((m) => m.provider !== 'local');
      const models = (real.length > 0 ? real : usable).filter((m) => this.operatorAllows(m.id));
      this.available = { models, listsVersion };
    }
    return this.available.models;
  }

  /** The decision for a request; a preview (`remember: false`) leaves the conversations as they were. */
  async route(ask: RouteAsk, options: { remember?: boolean } = {}): Promise<RoutingDecision> {
    const accountAllows = restrictionFilter(this.deps.account?.(ask.accountId));
    const forAccount = this.pool().filter((m) => accountAllows(m.id));
    const keyAllowed = ask.subAccountId ? (this.deps.subAccount?.(ask.subAccountId) ?? null) : null;
    const allowed = forAccount.filter((m) => allowsModel(keyAllowed, m.id));
    const figures = figuresAmong(await this.quality.forAccount(ask.accountId), allowed);
    const { scores, source, scored: pool } = figures;
    // The key's own list left nothing that would otherwise be routed to: a matter of permission, not of the request.
    const keyRefusal = (why: string) =>
      new RequestRefused(
        'forbidden',
        `'model': ${ask.requested} has no model to route to: ${why}; ${allowedText(keyAllowed ?? [])}`,
      );
    if (pool.length === 0 && keyAllowed !== null && forAccount.length > allowed.length) {
      throw keyRefusal('no model this gateway can route to is allowed for this key');
    }
    if (pool.length === 0) {
      // The account's lists are named only when they are what left nothing.
      const why =
        allowed.length < this.pool().length
          ? 'no available model with a quality figure is allowed for this account'
          : 'no available model has a quality figure';
      throw new RequestRefused('invalid', `'model': ${ask.requested} has no model to route to: ${why}`);
    }
    const rejected = new Map<string, number>();
    const fitting = pool.filter((model) => {
      const failed = CHECKS.find(([, fits]) => !fits(model, ask));
      if (failed) rejected.set(failed[0], (rejected.get(failed[0]) ?? 0) + 1);
      return !failed;
    });
    if (fitting.length === 0) {
      const why = [...rejected].map(([reason, n]) => `${n} ${reason}`).join('; ');
      const othersFit = forAccount.some(
        (model) => !allowed.includes(model) && CHECKS.every(([, fits]) => fits(model, ask)),
      );
      if (keyAllowed !== null && othersFit) {
        throw keyRefusal(`none of the models this key may use fits this request (of ${pool.length}: ${why})`);
      }
      throw new RequestRefused(
        'invalid',
        `'model': no model fits this request for ${ask.requested} (of ${pool.length}: ${why})`,
      );
    }
    const candidates = this.score(fitting, ask, scores);
    const baseline = this.baseline(candidates, ask);
    // Only a baseline the client named caps the price; the implicit one only measures the saving.
    const capped =
      ask.baselineModel === undefined
        ? candidates
        : candidates.filter((c) => c.priceNanos <= baseline.priceNanos);
    if (capped.length === 0) {
      throw new RequestRefused(
        'invalid',
        `'baseline_model': no fitting model costs at most ${baseline.model.id} for this request (${usd(baseline.priceNanos)})`,
      );
    }
    const complexity = ask.strategy === 'auto' ? estimateComplexity(ask.complexity) : null;
    const { chosen, reason } = this.choose(capped, ask, complexity);
    const order = this.fallbacks(capped, chosen, ask.strategy);
    if (ask.conversation && options.remember !== false)
      this.conversations.remember(ask.conversation, chosen.model.id);
    return {
      requested: ask.requested,
      strategy: ask.strategy,
      chosen,
      order,
      reason,
      baseline: baseline.model,
      baselinePriceNanos: baseline.priceNanos,
      complexity,
      qualitySource: source,
      candidates,
      ...(ask.conversation && { conversation: ask.conversation }),
    };
  }

  /** A conversation whose turn was served by a fallback stays with the model that served it. */
  served(decision: RoutingDecision, model: string): void {
    if (decision.conversation) this.conversations.remember(decision.conversation, model);
  }

  private score(models: CatalogModel[], ask: RouteAsk, scores: ReadonlyMap<string, number>): Scored[] {
    const latency = this.providerLatencies();
    const raw = models.map((m) => scores.get(m.id) ?? 0);
    const low = Math.min(...raw);
    const span = Math.max(...raw) - low;
    return models.map((model, i) => {
      const rawQuality = raw[i] ?? 0;
      return {
        model,
        priceNanos: requestPrice(model, ask),
        latencyMs: latency.get(model.provider) ?? DEFAULT_LATENCY_MS,
        rawQuality,
        quality: span === 0 ? 1 : Math.round(((rawQuality - low) / span) * 1000) / 1000,
      };
    });
  }

  /** Each provider's p50 from the gateway's own recent calls, recomputed at most every LATENCY_REFRESH_MS. */
  private providerLatencies(): Map<string, number> {
    const now = (this.deps.now ?? Date.now)();
    if (!this.latencies || now - this.latencies.at >= LATENCY_REFRESH_MS) {
      const measured = this.deps.health.report().filter((p) => p.requests > 0);
      this.latencies = { at: now, byProvider: new Map(measured.map((p) => [p.provider, p.p50_ms])) };
    }
    return this.latencies.byProvider;
  }

  /** `baseline_model` when given (any priced chat model of the catalog), else what `quality` would pick. */
  private baseline(candidates: Scored[], ask: RouteAsk): { model: CatalogModel; priceNanos: bigint } {
    if (ask.baselineModel === undefined) {
      const best = [...candidates].sort(ORDERS.quality)[0] as Scored;
      return { model: best.model, priceNanos: best.priceNanos };
    }
    const model = this.deps.catalog.get(ask.baselineModel);
    if (!model) {
      throw new RequestRefused(
        'invalid',
        `'baseline_model': the model '${ask.baselineModel}' does not exist`,
      );
    }
    if (
      model.modality !== 'text' ||
      model.prices.inputNanosPerMillion === null ||
      model.prices.outputNanosPerMillion === null
    ) {
      throw new RequestRefused(
        'invalid',
        `'baseline_model': ${model.id} is not a chat model priced per token`,
      );
    }
    return { model, priceNanos: requestPrice(model, ask) };
  }

  private choose(
    capped: Scored[],
    ask: RouteAsk,
    complexity: number | null,
  ): { chosen: Scored; reason: string } {
    const stayed = ask.conversation ? this.conversations.modelOf(ask.conversation) : undefined;
    const kept = stayed === undefined ? undefined : capped.find((c) => c.model.id === stayed);
    if (kept) return { chosen: kept, reason: 'conversation' };
    if (ask.strategy !== 'auto') {
      const chosen = [...capped].sort(ORDERS[ask.strategy])[0] as Scored;
      const reason = { cost: 'cheapest', speed: 'fastest', quality: 'best-quality' }[ask.strategy];
      return { chosen, reason };
    }
    const need = complexity ?? 0;
    const suited = capped.filter((c) => c.quality >= need);
    if (suited.length === 0) {
      return {
        chosen: [...capped].sort(ORDERS.quality)[0] as Scored,
        reason: `complexity ${need}: best under the cap`,
      };
    }
    return { chosen: [...suited].sort(ORDERS.cost)[0] as Scored, reason: `complexity ${need}` };
  }

  private fallbacks(capped: Scored[], chosen: Scored, strategy: Strategy): CatalogModel[] {
    const rest = capped.filter((c) => c !== chosen).sort(ORDERS[strategy === 'auto' ? 'quality' : strategy]);
    return [chosen, ...rest].slice(0, MAX_ATTEMPTS).map((c) => c.model);
  }
}
