import type { CatalogModel } from '../types.ts';
import { type UnitPricedModel, unitPricedModel } from '../unit-models.ts';

const VEO_PRICES = 'https://ai.google.dev/gemini-api/docs/pricing';

const MODELS: readonly UnitPricedModel[] = [
  ...(
    [
      ['veo-3.1-generate-preview', '0.40', 'Veo 3.1, video with sound'],
      ['veo-3.1-fast-generate-preview', '0.15', 'Veo 3.1 Fast, video with sound'],
      ['veo-3.0-generate-001', '0.40', 'Veo 3, video with sound'],
      ['veo-3.0-fast-generate-001', '0.15', 'Veo 3 Fast, video with sound'],
    ] as const
  ).map(
    ([name, price, description]): UnitPricedModel => ({
      id: `google/${name}`,
      modality: 'video',
      capabilities: ['text-to-video', 'async'],
      perUnitDollars: { video_second: price },
      description,
      note: `$${price} per second of video (${VEO_PRICES})`,
    }),
  ),
  {
    id: 'elevenlabs/music_v1',
    modality: 'music',
    capabilities: ['text-to-music', 'async'],
    // $0.80 a minute is 13,333,333⅓ nano-dollars a second: rounded up, never below the provider's rate.
    perUnitDollars: { music_second: '0.013333334' },
    description: 'ElevenLabs Music: songs and instrumentals from a prompt',
    note: '$0.80 per minute of music, billed per second (ElevenLabs bills music by generated length; figure to be confirmed against https://elevenlabs.io/pricing/api)',
  },
  {
    id: 'meshy/meshy-5',
    modality: '3d',
    capabilities: ['text-to-3d', 'async'],
    perUnitDollars: { model: '0.40' },
    description: 'Meshy text-to-3D, preview mesh as GLB',
    note: '$0.40 per model: 20 API credits per preview at $0.02 per credit (https://docs.meshy.ai/api/pricing; to be confirmed)',
  },
];

/** Video, music and 3D models, for the catalog. */
export const jobModels: readonly CatalogModel[] = MODELS.map(unitPricedModel);
