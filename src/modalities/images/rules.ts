import type { CatalogModel } from '../../catalog/types.ts';
import { RequestRefused } from '../../contracts/errors.ts';

/** The quality values a client may send: the spec's `standard`/`hd` and OpenAI's GPT image values. */
export const QUALITIES = ['standard', 'hd', 'low', 'medium', 'high', 'auto'] as const;
export type Quality = (typeof QUALITIES)[number];
export type ResponseFormat = 'url' | 'b64_json';

/** What a model takes, in the provider's terms. */
export interface ImageRules {
  /** Sizes sent as-is; `aspect`: any WxH, sent as the nearest aspect ratio; `none`: the output keeps the input's. */
  sizes: readonly string[] | 'aspect' | 'none';
  /** Sent when the client names no size (so the price is known); undefined leaves the provider's default. */
  defaultSize?: string;
  /** Client quality → the provider's; a value missing here is refused. Undefined: left to the provider (auto). */
  qualities: Partial<Record<Quality, string | undefined>>;
  /** Sent when the client names no quality. */
  defaultQuality?: string;
  maxN: number;
  styles: readonly string[];
  /** OpenAI's own default per model: URLs for DALL·E, base64 for the GPT image models. */
  defaultFormat: ResponseFormat;
  /** Billed by input token besides the images (GPT image models). */
  inputTokens: boolean;
}

const DALL_E_2: ImageRules = {
  sizes: ['256x256', '512x512', '1024x1024'],
  defaultSize: '1024x1024',
  qualities: { standard: 'standard', auto: 'standard' },
  defaultQuality: 'standard',
  maxN: 10,
  styles: [],
  defaultFormat: 'url',
  inputTokens: false,
};

const RULES: Readonly<Record<string, ImageRules>> = {
  'openai/dall-e-2': DALL_E_2,
  // The built-in test model takes DALL·E 2's options, and draws the smallest size unless asked: it is for trying.
  'local/image': { ...DALL_E_2, defaultSize: '256x256' },
  'openai/dall-e-3': {
    ...DALL_E_2,
    sizes: ['1024x1024', '1792x1024', '1024x1792'],
    qualities: { standard: 'standard', hd: 'hd', auto: 'standard' },
    maxN: 1,
    styles: ['vivid', 'natural'],
  },
  'openai/gpt-image-1': {
    sizes: ['1024x1024', '1536x1024', '1024x1536', 'auto'],
    qualities: {
      low: 'low',
      medium: 'medium',
      high: 'high',
      auto: undefined,
      standard: 'medium',
      hd: 'high',
    },
    maxN: 10,
    styles: [],
    defaultFormat: 'b64_json',
    inputTokens: true,
  },
};

/** Stability's style presets (Stable Image Core only). */
const STABILITY_STYLES = [
  '3d-model',
  'analog-film',
  'anime',
  'cinematic',
  'comic-book',
  'digital-art',
  'enhance',
  'fantasy-art',
  'isometric',
  'line-art',
  'low-poly',
  'modeling-compound',
  'neon-punk',
  'origami',
  'photographic',
  'pixel-art',
  'tile-texture',
];

const STABILITY: ImageRules = {
  sizes: 'aspect',
  qualities: { standard: undefined, auto: undefined },
  maxN: 10,
  styles: [],
  defaultFormat: 'url',
  inputTokens: false,
};

export function rulesOf(model: CatalogModel): ImageRules | undefined {
  if (model.provider === 'stability') {
    if (model.capabilities.includes('image-editing')) return { ...STABILITY, sizes: 'none' };
    return model.providerModelId === 'stable-image-core'
      ? { ...STABILITY, styles: STABILITY_STYLES }
      : STABILITY;
  }
  return RULES[model.id];
}

export interface ImageOptionsInput {
  n?: number;
  size?: string;
  quality?: Quality;
  style?: string;
  response_format?: ResponseFormat;
}

/** The request's options in the provider's terms, and what the price depends on. */
export interface ImageOptions {
  n: number;
  /** Sent upstream (WxH or `auto`), or undefined. */
  size: string | undefined;
  quality: string | undefined;
  style: string | undefined;
  responseFormat: ResponseFormat;
}

const refuse = (field: string, message: string) => new RequestRefused('invalid', `'${field}': ${message}`);

/** Checks the options against what the model takes; every refusal names the field and the accepted values. */
export function imageOptions(model: CatalogModel, rules: ImageRules, input: ImageOptionsInput): ImageOptions {
  const n = input.n ?? 1;
  if (n > rules.maxN) throw refuse('n', `${model.id} makes at most ${rules.maxN} image(s) per request`);
  let size = input.size ?? rules.defaultSize;
  if (input.size !== undefined) {
    if (rules.sizes === 'none') {
      throw refuse('size', `${model.id} keeps the size of the source image; leave size out`);
    }
    if (rules.sizes === 'aspect') {
      if (input.size === 'auto') size = undefined;
    } else if (!rules.sizes.includes(input.size)) {
      throw refuse('size', `${model.id} takes ${rules.sizes.join(', ')}`);
    }
  }
  let quality = rules.defaultQuality;
  if (input.quality !== undefined) {
    if (!Object.hasOwn(rules.qualities, input.quality)) {
      throw refuse('quality', `${model.id} takes ${Object.keys(rules.qualities).join(', ')}`);
    }
    quality = rules.qualities[input.quality];
  }
  if (input.style !== undefined && !rules.styles.includes(input.style)) {
    throw refuse(
      'style',
      rules.styles.length
        ? `${model.id} takes ${rules.styles.join(', ')}`
        : `${model.id} takes no style; leave it out`,
    );
  }
  return {
    n,
    size,
    quality,
    style: input.style,
    responseFormat: input.response_format ?? rules.defaultFormat,
  };
}
