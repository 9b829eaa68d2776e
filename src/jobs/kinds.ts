import type { z } from 'zod';
import type { JobModality } from '../../events/job.ts';
import type { CatalogModel, Modality } from '../catalog/types.ts';
import type { JobAdapter } from '../contracts/jobs.ts';
import type { PriceLine } from '../contracts/money.ts';
import { adapterFor } from '../providers/registry.ts';

/** One kind of job: its endpoint, default model, the adapter that runs it, and how its units are priced. */
export interface JobKind {
  modality: z.infer<typeof JobModality>;
  path: string;
  defaultModel: string;
  /** The model's per-unit price key (prices.perUnitNanos). */
  unit: string;
  /** The adapter that runs the job on the model (the registry's, by capability), if any does. */
  adapterOf(model: CatalogModel): JobAdapter | undefined;
  /** The catalog modality of its models (a transcription job's are audio-stt). */
  catalogModality: Modality;
  /** Why a model of the right modality still cannot run as this job, if it cannot. */
  refuse?(model: CatalogModel): string | undefined;
  /** How units are priced, when not units × perUnitNanos[unit]. */
  lines?(model: CatalogModel, units: number): PriceLine[];
}

export const JOB_KINDS = {
  video: {
    modality: 'video',
    catalogModality: 'video',
    path: '/v1/videos/generations',
    defaultModel: 'google/veo-3.0-fast-generate-001',
    unit: 'video_second',
    adapterOf: (model) => adapterFor(model, 'video'),
  },
  music: {
    modality: 'music',
    catalogModality: 'music',
    path: '/v1/audio/music',
    defaultModel: 'elevenlabs/music_v1',
    unit: 'music_second',
    adapterOf: (model) => adapterFor(model, 'music'),
  },
  '3d': {
    modality: '3d',
    catalogModality: '3d',
    path: '/v1/3d/generations',
    defaultModel: 'meshy/meshy-5',
    unit: 'model',
    adapterOf: (model) => adapterFor(model, '3d'),
  },
} as const satisfies Record<string, JobKind>;

export type GenerationKind = keyof typeof JOB_KINDS;
