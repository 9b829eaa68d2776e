import type { CapabilityId } from '../catalog/capabilities.ts';
import type { CatalogModel, Modality } from '../catalog/types.ts';

/** Nano-dollars per one unit, from a decimal dollar figure (exact to the nano-dollar). */
function usd(dollars: string): bigint {
  const [whole = '0', fraction = ''] = dollars.split('.');
  return BigInt(whole) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0').slice(0, 9));
}

interface JobModel {
  id: string;
  modality: Extract<Modality, 'video' | 'music' | '3d'>;
  capability: CapabilityId;
  /** What one unit is, and its price. */
  unit: 'video_second' | 'music_second' | 'model';
  price: bigint;
  description: string;
  note: string;
}

const VEO_PRICES = 'https://ai.google.dev/gemini-api/docs/pricing';

const MODELS: readonly JobModel[] = [
  ...(
    [
      ['veo-3.1-generate-preview', '0.40', 'Veo 3.1, video with sound'],
      ['veo-3.1-fast-generate-preview', '0.15', 'Veo 3.1 Fast, video with sound'],
      ['veo-3.0-generate-001', '0.40', 'Veo 3, video with sound'],
      ['veo-3.0-fast-generate-001', '0.15', 'Veo 3 Fast, video with sound'],
    ] as const
  ).map(
    ([name, price, description]): JobModel => ({
      id: `google/${name}`,
      modality: 'video',
      capability: 'text-to-video',
      unit: 'video_second',
      price: usd(price),
      description,
      note: `$${price} per second of video (${VEO_PRICES})`,
    }),
  ),
  {
    id: 'elevenlabs/music_v1',
    modality: 'music',
    capability: 'text-to-music',
    unit: 'music_second',
    // $0.80 per generated minute.
    price: usd('0.80') / 60n,
    description: 'ElevenLabs Music: songs and instrumentals from a prompt',
    note: '$0.80 per minute of music, billed per second (ElevenLabs bills music by generated length; figure to be confirmed against https://elevenlabs.io/pricing/api)',
  },
  {
    id: 'meshy/meshy-5',
    modality: '3d',
    capability: 'text-to-3d',
    unit: 'model',
    price: usd('0.40'),
    description: 'Meshy text-to-3D, preview mesh as GLB',
    note: '$0.40 per model: 20 API credits per preview at $0.02 per credit (https://docs.meshy.ai/api/pricing; to be confirmed)',
  },
];

function catalogModel(model: JobModel): CatalogModel {
  const slash = model.id.indexOf('/');
  const name = model.id.slice(slash + 1);
  return {
    id: model.id,
    provider: model.id.slice(0, slash),
    providerModelId: name,
    name,
    api: 'openai',
    modality: model.modality,
    contextWindow: null,
    maxOutputTokens: null,
    prices: {
      inputNanosPerMillion: null,
      outputNanosPerMillion: null,
      cachedInputNanosPerMillion: null,
      cacheWriteNanosPerMillion: null,
      perUnitNanos: { [model.unit]: model.price },
    },
    priceNotes: [model.note],
    capabilities: [model.capability, 'async'],
    quirks: { reasoning: false, noSampling: false, nativeFormat: null, maxTokensField: 'max_tokens' },
    deprecated: false,
    description: model.description,
  };
}

/** Video, music and 3D models, for the catalog. */
export const jobModels: readonly CatalogModel[] = MODELS.map(catalogModel);
