import { describe, expect, it } from 'vitest';
import { findModel } from '../../src/catalog/extra-models.ts';
import { buildCatalog } from '../../src/catalog/index.ts';
import type { CatalogModel } from '../../src/catalog/types.ts';
import { float32Base64, fromFloat32Base64 } from '../../src/modalities/embeddings/base64.ts';
import { worstCaseTokens } from '../../src/modalities/estimate.ts';
import { rerankPricing } from '../../src/modalities/rerank/pricing.ts';
import { cohereRerank } from '../../src/providers/cohere/rerank.ts';
import { toOpenAiVerdict } from '../../src/providers/mistral/moderations.ts';
import { voyageRerank } from '../../src/providers/voyage/rerank.ts';
import { countTextTokens } from '../../src/tokens/count.ts';

const catalog = buildCatalog();
const model = (id: string) => findModel(catalog, id) as CatalogModel;

describe('base64 embeddings', () => {
  it('are float32 little-endian, as OpenAI sends them', async () => {
    expect(float32Base64([1, -2])).toBe(Buffer.from([0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]).toString('base64'));
    expect(fromFloat32Base64(float32Base64([0.5, -0.25, 0.125]))).toEqual([0.5, -0.25, 0.125]);
  });
});

describe('worst cases', () => {
  it('hold 10% more tokens than counted plus 16 per text', async () => {
    expect(worstCaseTokens(100, 1)).toBe(126);
    expect(worstCaseTokens(95, 3)).toBe(95 + 10 + 48);
  });
});

describe('rerank pricing', () => {
  const query = 'capital of France';
  const documents = ['Paris is the capital of France', 'Berlin is in Germany'];

  it('bills Cohere per search unit at $2 per 1,000', async () => {
    const pricing = await rerankPricing(model('cohere/rerank-v3.5'), cohereRerank, query, documents);
    expect(pricing).toMatchObject({ unit: 'search_units', item: 'search_units', counted: 1, worst: 1 });
    expect(pricing.unitPriceNanosPerMillion).toBe(2_000_000_000_000n);
  });

  it('counts a search unit per 100 documents, long documents as several', async () => {
    const many = Array.from({ length: 150 }, () => 'a short document');
    expect((await rerankPricing(model('cohere/rerank-v3.5'), cohereRerank, query, many)).counted).toBe(2);
    const long = ['word '.repeat(1200)];
    expect((await rerankPricing(model('cohere/rerank-v3.5'), cohereRerank, query, long)).counted).toBe(1);
    const chunks = Array.from({ length: 40 }, () => 'word '.repeat(1200));
    expect((await rerankPricing(model('cohere/rerank-v3.5'), cohereRerank, query, chunks)).counted).toBe(2);
  });

  it('bills Voyage per token: the query once per document plus every document', async () => {
    const pricing = await rerankPricing(model('voyageai/rerank-2.5'), voyageRerank, query, documents);
    const q = countTextTokens(query);
    const counted = q * 2 + countTextTokens(documents[0] as string) + countTextTokens(documents[1] as string);
    expect(pricing).toMatchObject({ unit: 'tokens', item: 'input_tokens', counted });
    expect(pricing.worst).toBe(worstCaseTokens(counted, 2));
    expect(pricing.unitPriceNanosPerMillion).toBe(50_000_000n);
  });
});

describe('Mistral moderation verdicts', () => {
  it("merge Mistral's two criminal categories into OpenAI's illicit", () => {
    const verdict = toOpenAiVerdict({
      categories: { dangerous: false, criminal: true, dangerous_and_criminal_content: false, pii: false },
      category_scores: { dangerous: 0.2, criminal: 0.7, dangerous_and_criminal_content: 0.4, pii: 0.1 },
    });
    expect(verdict).toEqual({
      flagged: true,
      categories: { dangerous: false, illicit: true, pii: false },
      category_scores: { dangerous: 0.2, illicit: 0.7, pii: 0.1 },
    });
  });
});
