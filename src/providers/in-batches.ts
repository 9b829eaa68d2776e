import type { Embeddings } from '../contracts/modality.ts';

/**
 * Embeds in consecutive batches of at most `size` texts, for providers that cap a request below the API's 2,048
 * inputs. Batches run one after another, so a failure stops the rest; the call then fails as a whole and its hold
 * is released. Usage is the batches' sum, or unreported when any batch left it out.
 */
export async function inBatches(
  inputs: string[],
  size: number,
  embed: (batch: string[]) => Promise<Embeddings>,
): Promise<Embeddings> {
  const vectors: number[][] = [];
  let inputTokens: number | undefined = 0;
  for (let start = 0; start < inputs.length; start += size) {
    const part = await embed(inputs.slice(start, start + size));
    vectors.push(...part.vectors);
    inputTokens =
      inputTokens === undefined || part.inputTokens === undefined
        ? undefined
        : inputTokens + part.inputTokens;
  }
  return { vectors, inputTokens };
}
