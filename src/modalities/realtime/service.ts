import type { WebSocket } from 'ws';
import type { CatalogModel } from '../../catalog/types.ts';
import type { LiveAdapter } from '../../contracts/realtime.ts';
import type { ModalityDeps, RequestContext } from '../../pipeline/priced.ts';
import { clientError } from '../../pipeline/retries.ts';
import { defaultModelId } from '../models.ts';
import { PREFERRED_REALTIME_MODELS, realtimeEndpoint, resolveRealtimeModel } from './endpoint.ts';
import { AudioHolds } from './holds.ts';
import {
  type AudioMeter,
  CODED_HOLD_TTL_MS,
  CODED_MAX_SLICE_SECONDS,
  codedMeter,
  pcmMeter,
} from './meter.ts';
import { perMillionSeconds, realtimeRate } from './pricing.ts';
import { PCM_BYTES_PER_SAMPLE, type RealtimeQuery } from './request.ts';

export interface PreparedStream {
  model: CatalogModel;
  adapter: LiveAdapter;
  upstream: WebSocket;
  holds: AudioHolds;
  meter: AudioMeter;
}

/**
 * Everything a stream needs before the client's handshake is answered, so that each refusal is an HTTP error in
 * the API's shape: the model (404, 400), the first slice of audio held (402), and the provider's stream open (502,
 * 504; its hold is then released).
 */
export async function prepareStream(
  deps: ModalityDeps,
  context: RequestContext,
  query: RealtimeQuery,
  log: (error: unknown, message: string) => void,
): Promise<PreparedStream> {
  const id = query.model ?? defaultModelId(deps, realtimeEndpoint, PREFERRED_REALTIME_MODELS);
  const { model, adapter, upstream: target } = resolveRealtimeModel(deps, id);
  const bytesPerSample = query.encoding && PCM_BYTES_PER_SAMPLE[query.encoding];
  const meter =
    bytesPerSample && query.sample_rate
      ? pcmMeter({ bytesPerSample, sampleRate: query.sample_rate, channels: query.channels ?? 1 })
      : codedMeter;
  const holds = await AudioHolds.start({
    spending: deps.spending,
    auth: context.auth,
    requestId: context.requestId,
    tag: context.tag,
    model,
    unitPrice: perMillionSeconds(realtimeRate(model) as bigint),
    usageReported: !meter.exact,
    ...(!meter.exact && { maxSliceSeconds: CODED_MAX_SLICE_SECONDS, ttlMs: CODED_HOLD_TTL_MS }),
    log,
    ...(context.log && { requestLog: context.log }),
  });
  const started = performance.now();
  try {
    const upstream = await adapter.open(
      target,
      {
        encoding: query.encoding,
        sampleRate: query.sample_rate,
        channels: query.channels,
        interimResults: query.interim_results,
        language: query.language,
      },
      context.signal,
    );
    deps.health.record(model.provider, performance.now() - started, true);
    return { model, adapter, upstream, holds, meter };
  } catch (error) {
    if (!context.signal.aborted) deps.health.record(model.provider, performance.now() - started, false);
    await holds.finish(0, 'failed');
    throw clientError(error, model.id);
  }
}
