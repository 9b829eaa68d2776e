import { findModel } from '../../../catalog/extra-models.ts';
import type { Catalog } from '../../../catalog/types.ts';
import { JOB_KINDS, type JobKind } from '../../../jobs/kinds.ts';
import { jobEndpoint } from '../../../jobs/service.ts';
import { defaultTaskChatModel } from '../../../modalities/chat-task.ts';
import { detectionEndpoint, PREFERRED_DETECTION_MODELS } from '../../../modalities/detections/endpoint.ts';
import {
  editsEndpoint,
  generationsEndpoint,
  PREFERRED_EDIT_MODELS,
  PREFERRED_GENERATION_MODELS,
} from '../../../modalities/images/endpoint.ts';
import { defaultModelId, type EndpointSpec, servable } from '../../../modalities/models.ts';
import {
  moderationsEndpoint,
  PREFERRED_MODERATION_MODELS,
} from '../../../modalities/moderations/endpoint.ts';
import { ocrEndpoint, PREFERRED_OCR_MODELS } from '../../../modalities/ocr/endpoint.ts';
import { PREFERRED_REALTIME_MODELS, realtimeEndpoint } from '../../../modalities/realtime/endpoint.ts';
import { PREFERRED_RERANK_MODELS, rerankEndpoint } from '../../../modalities/rerank/endpoint.ts';
import { defaultTranslationModel } from '../../../modalities/translations/service.ts';

interface Source {
  catalog: Catalog;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
}

const first =
  <A>(endpoint: EndpointSpec<A>, preferred: string[]) =>
  (source: Source) =>
    defaultModelId(source, endpoint, preferred);

/** A job kind's default, when this gateway can serve and bill it (its provider's key is set). */
const jobDefault = (kind: JobKind) => (source: Source) => {
  const model = findModel(source.catalog, kind.defaultModel);
  return model && servable(source.env, jobEndpoint(kind), model) ? model.id : undefined;
};

/**
 * The model each endpoint uses when a request names none, by endpoint path, as this gateway would choose it now
 * (the first of the endpoint's preferred models whose provider is configured). Endpoints that require a model
 * (chat, messages, embeddings, speech, synchronous transcription) have none.
 */
const DEFAULTS: Readonly<Record<string, (source: Source) => string | undefined>> = {
  '/v1/images/generations': first(generationsEndpoint, PREFERRED_GENERATION_MODELS),
  '/v1/images/edits': first(editsEndpoint, PREFERRED_EDIT_MODELS),
  '/v1/moderations': first(moderationsEndpoint, PREFERRED_MODERATION_MODELS),
  '/v1/rerank': first(rerankEndpoint, PREFERRED_RERANK_MODELS),
  '/v1/detections': first(detectionEndpoint, PREFERRED_DETECTION_MODELS),
  '/v1/ocr': first(ocrEndpoint, PREFERRED_OCR_MODELS),
  '/v1/realtime': first(realtimeEndpoint, PREFERRED_REALTIME_MODELS),
  '/v1/translations': (source) => defaultTranslationModel(source),
  '/v1/classifications': (source) => defaultTaskChatModel(source),
  ...Object.fromEntries(Object.values(JOB_KINDS).map((kind) => [kind.path, jobDefault(kind)])),
};

/** The default model of an endpoint on this gateway, or null (none configured, or the endpoint needs a model). */
export function endpointDefault(path: string, source: Source): string | null {
  try {
    return DEFAULTS[path]?.(source) ?? null;
  } catch {
    return null;
  }
}
