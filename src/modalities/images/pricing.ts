import type { CatalogModel } from '../../catalog/types.ts';
import type { ProducedImages } from '../../contracts/images.ts';
import type { PriceLine } from '../../contracts/money.ts';
import { countTextTokens } from '../../tokens/count.ts';
import { worstCaseTokens } from '../estimate.ts';
import type { ImageRules } from './rules.ts';

const MILLION = 1_000_000n;

/**
 * The most image tokens one input image can cost a GPT image model. OpenAI bills an input image by its tiles (a
 * 1024 px square is a few hundred tokens) plus, at high input fidelity, 4,160 (square) or 6,240 (3:2) more; this
 * bound covers both, so the hold is never below the bill. Unreported, the bound itself is billed and marked
 * estimated.
 */
export const IMAGE_INPUT_TOKEN_BOUND = 10_000;

export interface UnitPrice {
  /** The `perUnitNanos` key: `image:1024x1024:hd`, or `image`. */
  unit: string;
  nanos: bigint;
}

/**
 * The price of one image of this size and quality; either left open (`auto`, or the provider's default) takes the
 * dearest that matches, which is what a hold must cover.
 */
export function perImagePrice(
  model: CatalogModel,
  size: string | undefined,
  quality: string | undefined,
): UnitPrice | undefined {
  const prices = model.prices.perUnitNanos ?? {};
  const flat = prices.image;
  if (flat !== undefined) return { unit: 'image', nanos: flat };
  let best: UnitPrice | undefined;
  for (const [unit, nanos] of Object.entries(prices)) {
    const [kind, unitSize, unitQuality] = unit.split(':');
    if (kind !== 'image' || unitSize === undefined || unitQuality === undefined) continue;
    if (size !== undefined && size !== 'auto' && size !== unitSize) continue;
    if (quality !== undefined && quality !== unitQuality) continue;
    if (!best || nanos > best.nanos) best = { unit, nanos };
  }
  return best;
}

export function hasImagePrice(model: CatalogModel): boolean {
  return Object.keys(model.prices.perUnitNanos ?? {}).some((unit) => unit.split(':')[0] === 'image');
}

const imagesLine = (price: UnitPrice, quantity: number): PriceLine => ({
  item: price.unit,
  quantity,
  unitPriceNanosPerMillion: price.nanos * MILLION,
});

export interface ImagePricing {
  worstCase: PriceLine[];
  /** What was returned, priced: the provider's size and quality where it said, else the request's. */
  settle(produced: ProducedImages): { lines: PriceLine[]; usageReported: boolean };
}

export function imagePricing(
  model: CatalogModel,
  rules: ImageRules,
  request: {
    prompt: string;
    n: number;
    size: string | undefined;
    quality: string | undefined;
    inputImages: number;
  },
): ImagePricing {
  const worstImage = perImagePrice(model, request.size, request.quality);
  if (!worstImage)
    throw new Error(`${model.id} has no per-image price for ${request.size} ${request.quality}`);
  const textPrice = model.prices.inputNanosPerMillion;
  const imageTokenPrice = model.prices.perUnitNanos?.input_image_token;
  const tokenLines = (textTokens: number, imageTokens: number): PriceLine[] => {
    if (!rules.inputTokens || textPrice === null) return [];
    const lines: PriceLine[] = [
      { item: 'input_tokens', quantity: textTokens, unitPriceNanosPerMillion: textPrice },
    ];
    if (imageTokenPrice !== undefined && request.inputImages > 0) {
      lines.push({
        item: 'input_image_tokens',
        quantity: imageTokens,
        unitPriceNanosPerMillion: imageTokenPrice * MILLION,
      });
    }
    return lines;
  };
  const counted = countTextTokens(request.prompt);
  const imageBound = IMAGE_INPUT_TOKEN_BOUND * request.inputImages;
  return {
    worstCase: [imagesLine(worstImage, request.n), ...tokenLines(worstCaseTokens(counted, 1), imageBound)],
    settle(produced) {
      const size = produced.size ?? request.size;
      const quality = produced.quality ?? request.quality;
      const exact = perImagePrice(model, size, quality);
      // A size or quality left to the provider and not reported is billed at the held (dearest) price.
      const open =
        (size === undefined || size === 'auto' || quality === undefined) && exact?.unit !== 'image';
      const price = exact ?? worstImage;
      const tokensReported =
        !rules.inputTokens ||
        (produced.textTokens !== undefined &&
          (request.inputImages === 0 || produced.imageTokens !== undefined));
      return {
        lines: [
          imagesLine(price, produced.images.length),
          ...tokenLines(produced.textTokens ?? counted, produced.imageTokens ?? imageBound),
        ],
        usageReported: !open && tokensReported,
      };
    },
  };
}
