import { describe, expect, it } from 'vitest';
import { permitModel } from '../../src/accounts/model-access.ts';
import { matchesModel } from '../../src/accounts/reseller-settings.ts';

describe('model patterns', () => {
  it('matches an id exactly, ignoring case, and * as any run of characters', () => {
    expect(matchesModel('openai/gpt-4o-mini', 'OpenAI/GPT-4o-mini')).toBe(true);
    expect(matchesModel('openai/gpt-4o-mini', 'openai/gpt-4o')).toBe(false);
    expect(matchesModel('openai/*', 'openai/gpt-4o')).toBe(true);
    expect(matchesModel('openai/*', 'anthropic/claude-sonnet-4-5')).toBe(false);
    expect(matchesModel('*mini*', 'openai/gpt-4o-mini-2024-07-18')).toBe(true);
    expect(matchesModel('*', 'local/echo')).toBe(true);
    expect(matchesModel('*/gpt-*-mini', 'openai/gpt-4o-mini')).toBe(true);
    expect(matchesModel('*/gpt-*-mini', 'openai/gpt-4o-mini-tts')).toBe(false);
    // A run the pattern names twice must be there twice.
    expect(matchesModel('a*a', 'a')).toBe(false);
    expect(matchesModel('a*a', 'aa')).toBe(true);
  });
});

describe('a key’s allowed models', () => {
  it('allows every model without a list, none with an empty one, and names what was asked in a refusal', () => {
    expect(() => permitModel(null, 'openai/gpt-4o')).not.toThrow();
    expect(() => permitModel(['OPENAI/*'], 'openai/gpt-4o')).not.toThrow();
    expect(() => permitModel([], 'local/echo')).toThrow(
      "'model': local/echo is not allowed for this key; this key may use no model (its sub-account allows none)",
    );
    expect(() =>
      permitModel(['local/*'], 'openai/gpt-4o-mini', { named: 'gpt-4o-mini', field: 'target_model' }),
    ).toThrow(
      "'target_model': gpt-4o-mini (openai/gpt-4o-mini) is not allowed for this key; this key may use local/* (GET /v1/models lists them)",
    );
  });
});
