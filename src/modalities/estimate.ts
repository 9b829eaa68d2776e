import type { PriceLine } from '../contracts/money.ts';
import { countTextsAsync } from '../tokens/count.ts';

/**
 * The gateway counts with OpenAI's o200k tokenizer; Cohere, Voyage, Google and Mistral tokenize differently and
 * wrap each text in special tokens. A hold caps the charge (a settlement above it is recorded as an overrun, not
 * billed), so the worst case is the gateway's count plus 10%, plus 16 tokens per text.
 */
export function worstCaseTokens(counted: number, texts: number): number {
  return counted + Math.ceil(counted / 10) + 16 * texts;
}

export async function countAll(texts: readonly string[]): Promise<number> {
  const counts = await countTextsAsync([...texts]);
  return counts.reduce((sum, count) => sum + count, 0);
}

export function inputTokensLine(quantity: number, unitPriceNanosPerMillion: bigint): PriceLine {
  return { item: 'input_tokens', quantity, unitPriceNanosPerMillion };
}
