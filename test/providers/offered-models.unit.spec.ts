import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/catalog/index.ts';
import { modelListIntervalMs } from '../../src/providers/model-lists.ts';
import { OfferedModels } from '../../src/providers/offered-models.ts';

const catalog = buildCatalog();
const model = (id: string) => {
  const found = catalog.get(id);
  if (!found) throw new Error(`no ${id} in the catalog`);
  return found;
};
const at = new Date('2026-01-01T00:00:00.000Z');

describe('what a provider’s model list offers', () => {
  it('is unknown before a list, then what the list names, ignoring case', () => {
    const offered = new OfferedModels();
    expect(offered.offer(model('openai/gpt-4o'))).toBeUndefined();
    expect(offered.listed('openai', ['GPT-4o', 'omni-moderation-latest'], at)).toBe(true);
    expect(offered.offer(model('openai/gpt-4o'))).toBe(true);
    // A family entry is offered through the model it calls.
    expect(offered.offer(model('openai/moderation'))).toBe(true);
    expect(offered.offer(model('openai/davinci'))).toBe(
      "openai does not offer 'davinci' to this gateway's key (its model list, fetched 2026-01-01T00:00:00.000Z, does not name it)",
    );
    // Another provider's models are not decided by OpenAI's list.
    expect(offered.offer(model('anthropic/claude-sonnet-4-5'))).toBeUndefined();
  });

  it('serves Anthropic’s aliases through the snapshots it lists', () => {
    const offered = new OfferedModels();
    offered.listed(
      'anthropic',
      [
        'claude-sonnet-4-5-20250929',
        'claude-3-7-sonnet-20250219',
        'claude-opus-4-20250514',
        'claude-opus-4-6',
      ],
      at,
    );
    for (const id of [
      'claude-sonnet-4-5',
      'claude-3-7-sonnet-latest',
      'claude-opus-4-0',
      'claude-opus-4-6',
    ]) {
      expect(offered.offer(model(`anthropic/${id}`)), id).toBe(true);
    }
    for (const id of ['claude-haiku-4-5', 'claude-2', 'claude-opus-4-1']) {
      expect(offered.offer(model(`anthropic/${id}`)), id).toMatch(/does not offer/);
    }
  });

  it('counts a change only when the ids differ, and keeps the list across a failure', () => {
    const offered = new OfferedModels();
    offered.listed('google', ['gemini-2.5-flash'], at);
    const version = offered.version;
    expect(offered.listed('google', ['gemini-2.5-flash'], new Date(at.getTime() + 1000))).toBe(false);
    expect(offered.version).toBe(version);
    offered.failed('google', 'the provider answered 503: overloaded', new Date(at.getTime() + 2000));
    expect(offered.offer(model('google/gemini-2.5-flash'))).toBe(true);
    expect(offered.status()).toEqual([
      {
        provider: 'google',
        models: 1,
        fetchedAt: new Date(at.getTime() + 1000),
        error: 'the provider answered 503: overloaded',
        failedAt: new Date(at.getTime() + 2000),
      },
    ]);
    expect(offered.listed('google', ['gemini-2.5-flash', 'gemini-2.5-pro'], at)).toBe(true);
    expect(offered.version).toBe(version + 1);
    expect(offered.status()[0]?.error).toBeNull();
  });
});

describe('GATEWAY_MODEL_LIST_INTERVAL_MS', () => {
  it('defaults to ten minutes, takes 0 for never again, and refuses what is not a duration', () => {
    expect(modelListIntervalMs({})).toBe(600_000);
    expect(modelListIntervalMs({ GATEWAY_MODEL_LIST_INTERVAL_MS: '0' })).toBe(0);
    expect(modelListIntervalMs({ GATEWAY_MODEL_LIST_INTERVAL_MS: '250' })).toBe(250);
    for (const bad of ['5', '-1', '1.5', 'soon']) {
      expect(() => modelListIntervalMs({ GATEWAY_MODEL_LIST_INTERVAL_MS: bad })).toThrow(
        /GATEWAY_MODEL_LIST_INTERVAL_MS: a whole number of milliseconds/,
      );
    }
  });
});
