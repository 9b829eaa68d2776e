import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/catalog/index.ts';
import { knownLimits, MODEL_LIMITS } from '../../src/catalog/model-limits.ts';
import { QUALITY_PRIOR } from '../../src/catalog/quality.ts';
import { usdText } from '../../src/pipeline/headers.ts';
import { ProviderHealth } from '../../src/providers/health.ts';
import { estimateComplexity } from '../../src/routing/complexity.ts';
import { Conversations, conversationKey, STAY_MS } from '../../src/routing/conversations.ts';
import { matcher, restrictionFilter } from '../../src/routing/patterns.ts';
import type { QualityScores, QualitySource } from '../../src/routing/quality.ts';
import {
  type RouteAsk,
  Router,
  UNKNOWN_CONTEXT_TOKENS,
  UNKNOWN_OUTPUT_TOKENS,
} from '../../src/routing/router.ts';
import { parseStrategy, routedModel } from '../../src/routing/strategy.ts';

const ask = (extra: Partial<RouteAsk> = {}): RouteAsk => ({
  accountId: 'acct_1',
  requested: 'auto',
  strategy: 'quality',
  inputTokens: 20,
  choices: 1,
  tools: false,
  images: false,
  json: false,
  reasoning: false,
  stream: false,
  sampling: false,
  complexity: { lastUserText: 'hi', messages: 1 },
  ...extra,
});

describe('the router’s parts', () => {
  it('reads x-routing and the routed model ids', () => {
    expect(parseStrategy(undefined)).toBe('auto');
    expect(parseStrategy(' Cost ')).toBe('cost');
    expect(() => parseStrategy('cheap')).toThrow("'x-routing': one of cost, speed, quality, auto");
    expect(routedModel(undefined)).toBe('auto');
    expect(routedModel('auto/text')).toBe('auto/text');
    expect(routedModel('openai/gpt-4o')).toBeUndefined();
  });

  it('matches wildcard patterns, allowed minus excluded', () => {
    expect(matcher(['openai/*'])('openai/gpt-4o')).toBe(true);
    expect(matcher(['openai/*'])('anthropic/claude')).toBe(false);
    expect(matcher(['*-mini'])('openai/gpt-4o-mini')).toBe(true);
    expect(matcher(['openai/gpt-4.1'])('openai/gpt-4o1')).toBe(false);
    const allows = restrictionFilter({ allowed: ['openai/*'], excluded: ['*mini*'] });
    expect(allows('openai/gpt-4.1')).toBe(true);
    expect(allows('openai/gpt-4.1-mini')).toBe(false);
    expect(restrictionFilter({ allowed: null, excluded: [] })('x/y')).toBe(true);
    // An empty allow-list is none, not an allow-list of nothing.
    expect(restrictionFilter({ allowed: [], excluded: [] })('x/y')).toBe(true);
    expect(restrictionFilter({ allowed: [], excluded: ['x/*'] })('x/y')).toBe(false);
  });

  it('estimates complexity from length, code, mathematics, steps and depth', () => {
    expect(estimateComplexity({ lastUserText: 'hello', messages: 1 })).toBe(0);
    const code = estimateComplexity({ lastUserText: '```\nconst x = 1;\n```', messages: 1 });
    const both = estimateComplexity({
      lastUserText: 'Explain step by step: ```\nconst x = 1;\n``` and prove 2 + 2 = 4',
      messages: 9,
      reasoningEffort: 'high',
    });
    expect(code).toBeGreaterThan(0.2);
    expect(both).toBeGreaterThan(0.9);
    expect(both).toBeLessThanOrEqual(1);
  });

  it('writes dollars exactly, with the sign', () => {
    expect(usdText(0n)).toBe('0.000000000');
    expect(usdText(1_234_567_890n)).toBe('1.234567890');
    expect(usdText(-5n)).toBe('-0.000000005');
  });

  it('knows a conversation by its account, system prompt, first user message and routing question, for 30 minutes', () => {
    const asked = { requested: 'auto', strategy: 'cost' };
    const a = conversationKey(
      'acct',
      [
        { role: 'system', content: 's' },
        { role: 'user', content: 'first' },
      ],
      asked,
    );
    const later = conversationKey(
      'acct',
      [
        { role: 'system', content: 's' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'reply' },
        { role: 'user', content: 'second' },
      ],
      asked,
    );
    expect(later).toBe(a);
    const opening = [
      { role: 'system', content: 's' },
      { role: 'user', content: 'first' },
    ];
    expect(conversationKey('other', opening, asked)).not.toBe(a);
    // Another strategy, baseline or alias asks the router another question: a new decision.
    expect(conversationKey('acct', opening, { ...asked, strategy: 'quality' })).not.toBe(a);
    expect(conversationKey('acct', opening, { ...asked, baselineModel: 'openai/gpt-4o' })).not.toBe(a);
    expect(conversationKey('acct', opening, { ...asked, requested: 'auto/text' })).not.toBe(a);
    let now = 0;
    const memory = new Conversations(() => now);
    memory.remember(a as string, 'm');
    now = STAY_MS;
    expect(memory.modelOf(a as string)).toBe('m');
    now = STAY_MS * 2 + 1;
    expect(memory.modelOf(a as string)).toBeUndefined();
  });
});

describe('the router over the catalog', () => {
  const catalog = buildCatalog();
  const env = { OPENAI_API_KEY: 'k' };
  // Scores of one scale from another source (an account's evals) decide the order among the models they rank.
  const usual = {
    scores: new Map([
      ['openai/gpt-4o-mini', 1],
      ['openai/gpt-4.1', 2],
    ]),
    source: 'prior',
  };
  const evals: QualitySource = {
    forAccount: (accountId) =>
      accountId === 'acct_eval'
        ? [
            {
              scores: new Map([
                ['openai/gpt-4o-mini', 0.9],
                ['openai/gpt-4.1', 0.5],
              ]),
              source: 'eval:ev_1',
            },
            usual,
          ]
        : [usual],
  };
  const router = new Router({ catalog, env, health: new ProviderHealth(), quality: evals });

  it('takes its quality figures from the quality source, per account', async () => {
    const prior = await router.route(ask());
    expect(prior.chosen.model.id).toBe('openai/gpt-4.1');
    expect(prior.qualitySource).toBe('prior');
    const evaluated = await router.route(ask({ accountId: 'acct_eval' }));
    expect(evaluated.chosen.model.id).toBe('openai/gpt-4o-mini');
    expect(evaluated.qualitySource).toBe('eval:ev_1');
    expect(evaluated.candidates.map((c) => c.model.id).sort()).toEqual([
      'openai/gpt-4.1',
      'openai/gpt-4o-mini',
    ]);
  });

  it('takes the newest eval that ranks two models it can use, else the usual figures', async () => {
    const set = (source: string, scores: [string, number][]) => ({ scores: new Map(scores), source });
    const sources: Record<string, QualityScores[]> = {
      // The local models are not routed to beside a real provider; one usable model ranks nothing.
      acct_local: [
        set('eval:local', [
          ['local/echo', 1],
          ['local/echo-pro', 0.5],
        ]),
        set('eval:one', [
          ['local/echo', 1],
          ['openai/gpt-4o-mini', 0.2],
        ]),
        usual,
      ],
      acct_older: [
        set('eval:local', [
          ['local/echo', 1],
          ['local/echo-pro', 0.5],
        ]),
        set('eval:older', [
          ['openai/gpt-4o-mini', 0.9],
          ['openai/gpt-4.1', 0.1],
        ]),
        usual,
      ],
    };
    const router = new Router({
      catalog,
      env,
      health: new ProviderHealth(),
      quality: { forAccount: (accountId) => sources[accountId] ?? [usual] },
    });
    const local = await router.route(ask({ accountId: 'acct_local' }));
    expect(local.qualitySource).toBe('prior');
    expect(local.chosen.model.id).toBe('openai/gpt-4.1');
    const older = await router.route(ask({ accountId: 'acct_older' }));
    expect(older.qualitySource).toBe('eval:older');
    expect(older.chosen.model.id).toBe('openai/gpt-4o-mini');
    // Nothing with a figure at all: the refusal does not blame an account that has no lists.
    const bare = new Router({
      catalog,
      env,
      health: new ProviderHealth(),
      quality: { forAccount: () => [set('prior', [['local/echo', 1]])] },
    });
    await expect(bare.route(ask())).rejects.toThrow(
      "'model': auto has no model to route to: no available model has a quality figure",
    );
  });

  it('uses the local models only when no real provider is configured', async () => {
    const demo = new Router({ catalog, env: {}, health: new ProviderHealth() });
    const decision = await demo.route(ask());
    expect(decision.candidates.map((c) => c.model.id).sort()).toEqual(['local/echo', 'local/echo-pro']);
    const real = new Router({ catalog, env, health: new ProviderHealth() });
    const routed = await real.route(ask());
    expect(routed.candidates.some((c) => c.model.provider === 'local')).toBe(false);
  });

  it('sends a model of unknown limits only requests within a small window and output', async () => {
    // gpt-chat-latest: neither the price list nor models.dev gives its window or output limit.
    const unknown = catalog.get('openai/gpt-chat-latest');
    expect(unknown && knownLimits(unknown)).toEqual({ contextWindow: null, maxOutputTokens: null });
    const scored: QualitySource = {
      forAccount: () => [
        {
          scores: new Map([
            ['openai/gpt-chat-latest', 2],
            ['openai/gpt-4o-mini', 1],
          ]),
          source: 'prior',
        },
      ],
    };
    const limited = new Router({ catalog, env, health: new ProviderHealth(), quality: scored });
    const pick = async (extra: Partial<RouteAsk>) => (await limited.route(ask(extra))).chosen.model.id;
    expect(await pick({ outputLimit: UNKNOWN_OUTPUT_TOKENS })).toBe('openai/gpt-chat-latest');
    expect(await pick({ outputLimit: UNKNOWN_OUTPUT_TOKENS + 1 })).toBe('openai/gpt-4o-mini');
    expect(await pick({ inputTokens: UNKNOWN_CONTEXT_TOKENS - 1 })).toBe('openai/gpt-chat-latest');
    expect(await pick({ inputTokens: UNKNOWN_CONTEXT_TOKENS })).toBe('openai/gpt-4o-mini');
    // gpt-4o-mini's known limits (128,000 and 16,384) bind it as they are.
    await expect(limited.route(ask({ outputLimit: 16_385 }))).rejects.toThrow(
      "'model': no model fits this request for auto (of 2: 2 have an output limit under the one asked)",
    );
  });

  it('refuses a baseline every fitting model costs more than, naming it', async () => {
    await expect(router.route(ask({ baselineModel: 'google/gemini-2.0-flash-lite' }))).rejects.toThrow(
      /^'baseline_model': no fitting model costs at most google\/gemini-2.0-flash-lite for this request/,
    );
  });

  it('routes a sub-account’s key only among its allowed models, and refuses it (403) when they leave none', async () => {
    const lists: Record<string, string[]> = { sa_mini: ['openai/gpt-4o-mini'], sa_claude: ['anthropic/*'] };
    const keyed = new Router({
      catalog,
      env,
      health: new ProviderHealth(),
      quality: evals,
      subAccount: (id) => lists[id] ?? null,
    });
    expect((await keyed.route(ask())).chosen.model.id).toBe('openai/gpt-4.1');
    const mini = await keyed.route(ask({ subAccountId: 'sa_mini' }));
    expect(mini.candidates.map((c) => c.model.id)).toEqual(['openai/gpt-4o-mini']);
    await expect(keyed.route(ask({ subAccountId: 'sa_claude' }))).rejects.toMatchObject({
      kind: 'forbidden',
      message:
        "'model': auto has no model to route to: no model this gateway can route to is allowed for this key; " +
        'this key may use anthropic/* (GET /v1/models lists them)',
    });
    // gpt-4.1 would take this output limit; the one model the key may use cannot.
    await expect(keyed.route(ask({ subAccountId: 'sa_mini', outputLimit: 20_000 }))).rejects.toMatchObject({
      kind: 'forbidden',
      message: expect.stringMatching(
        /^'model': auto has no model to route to: none of the models this key may use fits this request \(of 1: 1 have an output limit under the one asked\)/,
      ),
    });
  });
});

describe('the quality prior', () => {
  it('names priced chat models of the catalog, once each, every figure with its source and date', () => {
    const catalog = buildCatalog();
    const ids = QUALITY_PRIOR.map((f) => f.model);
    expect(new Set(ids).size).toBe(ids.length);
    for (const figure of QUALITY_PRIOR) {
      const model = catalog.get(figure.model);
      expect(model, figure.model).toBeDefined();
      expect(model?.modality).toBe('text');
      expect(model?.capabilities).toContain('chat');
      expect(model?.prices.inputNanosPerMillion).not.toBeNull();
      expect(figure.asOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(figure.source.length).toBeGreaterThan(10);
      expect(figure.listedAs.length).toBeGreaterThan(0);
    }
  });

  it('has limits, from a named source, for the chat models it names', () => {
    const catalog = buildCatalog();
    const ids = MODEL_LIMITS.map((l) => l.model);
    expect(new Set(ids).size).toBe(ids.length);
    for (const limits of MODEL_LIMITS) {
      const model = catalog.get(limits.model);
      expect(model?.capabilities, limits.model).toContain('chat');
      expect(limits.maxOutputTokens).toBeLessThanOrEqual(limits.contextWindow);
      expect(limits.source).toMatch(/^https:\/\/github\.com\/anomalyco\/models\.dev\/blob\/[0-9a-f]{40}\//);
    }
    // The price list's window stays where it gives one; the table fills the rest.
    expect(catalog.get('openai/gpt-4.1')?.contextWindow).toBe(1_000_000);
    expect(catalog.get('google/gemini-2.5-pro')?.contextWindow).toBe(1_048_576);
  });
});
