import { describe, expect, it } from 'vitest';
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
