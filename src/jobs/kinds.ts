import type { z } from 'zod';
import type { JobModality } from '../../events/job.ts';
import type { PriceLine } from '../billing/charge.ts';
import type { CatalogModel, Modality } from '../catalog/types.ts';
import { elevenLabsMusic, musicSeconds } from '../providers/elevenlabs/music.ts';
import { veoSeconds, veoVideos } from '../providers/gemini/videos.ts';
import { meshyTextTo3d } from '../providers/meshy/text-to-3d.ts';
import type { JobAdapter, JobInput } from './types.ts';

/** One kind of job: its endpoint, default model, adapters by provider, and how its units are counted. */
export interface JobKind {
  modality: z.infer<typeof JobModality>;
  path: string;
  defaultModel: string;
  /** The model's per-unit price key (prices.perUnitNanos). */
  unit: string;
  adapters: Readonly<Record<string, JobAdapter>>;
  /** Units the request will use at most: what is held at submission. */
  unitsFor(input: JobInput, model: CatalogModel): number;
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
    adapters: { google: veoVideos },
    unitsFor: (input) => veoSeconds(input.duration),
  },
  music: {
    modality: 'music',
    catalogModality: 'music',
    path: '/v1/audio/music',
    defaultModel: 'elevenlabs/music_v1',
    unit: 'music_second',
    adapters: { elevenlabs: elevenLabsMusic },
    unitsFor: (input) => musicSeconds(input.duration),
  },
  '3d': {
    modality: '3d',
    catalogModality: '3d',
    path: '/v1/3d/generations',
    defaultModel: 'meshy/meshy-5',
    unit: 'model',
    adapters: { meshy: meshyTextTo3d },
    unitsFor: () => 1,
  },
} as const satisfies Record<string, JobKind>;

export type GenerationKind = keyof typeof JOB_KINDS;
