import { dollarsPerMillion } from '../../contracts/money.ts';
import type { CatalogModel } from '../types.ts';

/**
 * Image models priced per image (`prices.perUnitNanos`, nano-dollars per ONE image), keyed `image:<WxH>:<quality>`
 * where the price depends on size and quality and `image` where one price covers every size. gpt-image-1 is also in
 * the price list (per token); the catalog keeps its token prices and adds the per-image ones from here.
 */
interface ImageModelSpec {
  id: string;
  capabilities: ('image-generation' | 'image-editing')[];
  /** Dollars per image, by unit key. */
  perImage: Record<string, string>;
  /** Dollars per million tokens, for models OpenAI also bills by token (the GPT image models). */
  tokens?: { input: string; output: string; inputImage: string };
  description: string;
  notes: string[];
}

/** Nano-dollars, exactly, for a dollar figure. */
const nanos = (dollars: string): bigint => dollarsPerMillion(dollars);

const square = (size: string) => {
  const [w, h] = size.split('x');
  return w === h;
};

/** gpt-image-1's per-image output prices: one figure for the square size, one for both 3:2 sizes. */
const GPT_IMAGE_1: Record<string, [string, string]> = {
  low: ['0.011', '0.016'],
  medium: ['0.042', '0.063'],
  high: ['0.167', '0.25'],
};

const OPENAI_PRICES = 'https://platform.openai.com/docs/pricing (image generation, per image)';
const STABILITY_PRICES =
  'https://platform.stability.ai/pricing: credits per successful generation, 1 credit = $0.01';

const perSize = (sizes: string[], quality: string, price: (size: string) => string) =>
  Object.fromEntries(sizes.map((size) => [`image:${size}:${quality}`, price(size)]));

const SPECS: readonly ImageModelSpec[] = [
  {
    id: 'openai/dall-e-2',
    capabilities: ['image-generation', 'image-editing'],
    perImage: {
      'image:256x256:standard': '0.016',
      'image:512x512:standard': '0.018',
      'image:1024x1024:standard': '0.02',
    },
    description: "OpenAI's DALL·E 2: generation and masked edits of square PNGs",
    notes: [`$0.016 / $0.018 / $0.020 per 256, 512 and 1024 px square image (${OPENAI_PRICES})`],
  },
  {
    id: 'openai/dall-e-3',
    capabilities: ['image-generation'],
    perImage: {
      'image:1024x1024:standard': '0.04',
      'image:1024x1792:standard': '0.08',
      'image:1792x1024:standard': '0.08',
      'image:1024x1024:hd': '0.08',
      'image:1024x1792:hd': '0.12',
      'image:1792x1024:hd': '0.12',
    },
    description: "OpenAI's DALL·E 3: one image per request, standard or hd",
    notes: [`standard $0.04 (square) / $0.08, hd $0.08 (square) / $0.12 per image (${OPENAI_PRICES})`],
  },
  {
    id: 'openai/gpt-image-1',
    capabilities: ['image-generation', 'image-editing'],
    perImage: Object.assign(
      {},
      ...Object.entries(GPT_IMAGE_1).map(([quality, [sq, other]]) =>
        perSize(['1024x1024', '1024x1536', '1536x1024'], quality, (s) => (square(s) ? sq : other)),
      ),
    ),
    tokens: { input: '5', output: '40', inputImage: '10' },
    description: "OpenAI's GPT Image 1: generation and edits, quality low, medium or high",
    notes: [
      `per image: low $0.011 / $0.016, medium $0.042 / $0.063, high $0.167 / $0.25 (square / 3:2) (${OPENAI_PRICES}); ` +
        'these are its output image tokens at $40 per million, billed per image here',
      'input tokens billed besides: text at the input price, image inputs (edits) at input_image_token ($10 per million)',
    ],
  },
  ...(
    [
      ['stable-image-ultra', '0.08', 'Stable Image Ultra', 8],
      ['stable-image-core', '0.03', 'Stable Image Core', 3],
      ['sd3.5-large', '0.065', 'Stable Diffusion 3.5 Large', 6.5],
      ['sd3.5-large-turbo', '0.04', 'Stable Diffusion 3.5 Large Turbo', 4],
      ['sd3.5-medium', '0.035', 'Stable Diffusion 3.5 Medium', 3.5],
    ] as const
  ).map(
    ([name, price, title, credits]): ImageModelSpec => ({
      id: `stability/${name}`,
      capabilities: ['image-generation'],
      perImage: { image: price },
      description: `Stability AI's ${title} (v2beta Stable Image API), one price for every aspect ratio`,
      notes: [`${credits} credits = $${price} per image (${STABILITY_PRICES})`],
    }),
  ),
  {
    id: 'stability/stable-image-inpaint',
    capabilities: ['image-editing'],
    perImage: { image: '0.05' },
    description:
      "Stability AI's inpainting (v2beta Stable Image Edit API): fills the masked or transparent area",
    notes: [`5 credits = $0.05 per edited image (${STABILITY_PRICES})`],
  },
];

function catalogModel(spec: ImageModelSpec): CatalogModel {
  const slash = spec.id.indexOf('/');
  const name = spec.id.slice(slash + 1);
  const perUnitNanos: Record<string, bigint> = Object.fromEntries(
    Object.entries(spec.perImage).map(([unit, dollars]) => [unit, nanos(dollars)]),
  );
  // Per ONE token: $10 per million tokens is 10,000 nano-dollars a token.
  if (spec.tokens) perUnitNanos.input_image_token = dollarsPerMillion(spec.tokens.inputImage) / 1_000_000n;
  return {
    id: spec.id,
    provider: spec.id.slice(0, slash),
    providerModelId: name,
    name,
    api: 'openai',
    modality: 'image',
    contextWindow: null,
    maxOutputTokens: null,
    prices: {
      inputNanosPerMillion: spec.tokens ? dollarsPerMillion(spec.tokens.input) : null,
      outputNanosPerMillion: spec.tokens ? dollarsPerMillion(spec.tokens.output) : null,
      cachedInputNanosPerMillion: null,
      cacheWriteNanosPerMillion: null,
      perUnitNanos,
    },
    priceNotes: spec.notes,
    capabilities: spec.capabilities,
    quirks: { reasoning: false, noSampling: false, nativeFormat: null, maxTokensField: 'max_tokens' },
    deprecated: false,
    description: spec.description,
  };
}

export const imageModels: readonly CatalogModel[] = SPECS.map(catalogModel);
