import { randomBytes } from 'node:crypto';
import type { ModerationsAdapter, ModerationVerdict } from '../../contracts/modality.ts';
import { countTextsAsync } from '../../tokens/count.ts';

/**
 * Keyword rules per OpenAI moderation category: a word (or phrase) of the list, matched whole and without regard
 * to case, flags the category with score 1; otherwise its score is 0. A rule list, not a classifier: it misses
 * anything phrased otherwise and flags quotations and negations alike. It lets the API be tried with no key.
 */
const RULES: Readonly<Record<string, readonly string[]>> = {
  violence: ['kill', 'murder', 'stab', 'shoot', 'behead', 'massacre', 'torture', 'assault'],
  'violence/graphic': ['gore', 'dismember', 'mutilate', 'disembowel'],
  harassment: ['idiot', 'moron', 'loser', 'worthless', 'pathetic'],
  'harassment/threatening': ['i will kill you', 'i will hurt you', 'you will die', 'watch your back'],
  hate: ['subhuman', 'vermin', 'go back to your country'],
  'hate/threatening': ['exterminate them', 'wipe them out'],
  'self-harm': ['self-harm', 'cut myself', 'hurt myself'],
  'self-harm/intent': ['kill myself', 'end my life', 'want to die', 'suicide'],
  'self-harm/instructions': ['how to kill myself', 'ways to end my life'],
  sexual: ['porn', 'explicit sex', 'nude', 'nsfw'],
  'sexual/minors': ['child porn', 'underage sex'],
  illicit: ['buy cocaine', 'make meth', 'launder money', 'counterfeit money', 'steal a car'],
  'illicit/violent': ['build a bomb', 'make a bomb', 'pipe bomb', 'buy a gun illegally'],
};

const escaped = (word: string) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const PATTERNS = Object.entries(RULES).map(
  ([category, words]) =>
    [
      category,
      new RegExp(`(?<![\\p{L}\\p{N}])(?:${words.map(escaped).join('|')})(?![\\p{L}\\p{N}])`, 'iu'),
    ] as const,
);

export function keywordVerdict(text: string): ModerationVerdict {
  const categories: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  const types: Record<string, string[]> = {};
  for (const [category, pattern] of PATTERNS) {
    const hit = pattern.test(text);
    categories[category] = hit;
    scores[category] = hit ? 1 : 0;
    types[category] = hit ? ['text'] : [];
  }
  return {
    flagged: Object.values(categories).some(Boolean),
    categories,
    category_scores: scores,
    category_applied_input_types: types,
  };
}

/** The built-in `local/moderation`: keyword rules, no key, no network. */
export const localModerations: ModerationsAdapter = {
  async moderate({ inputs }) {
    // Free, so nothing billed rests on this count: it is paced like a hold's (past its budget, the upper bound), and a
    // large body costs a bounded amount of CPU.
    const tokens = await countTextsAsync(inputs);
    return {
      id: `modr-${randomBytes(12).toString('hex')}`,
      results: inputs.map(keywordVerdict),
      inputTokens: tokens.reduce((sum, count) => sum + count, 0),
    };
  },
};
