import type { WebSocket } from 'ws';
import type { CatalogModel } from '../../catalog/types.ts';
import type { Charge } from '../../contracts/money.ts';
import type { LiveAdapter, LiveOptions } from '../../contracts/realtime.ts';
import { withCredential } from '../../pipeline/credentials.ts';
import { givesWay, ownKeyRoute, withOwnKey } from '../../pipeline/own-key.ts';
import type { ModalityDeps, RequestContext } from '../../pipeline/priced.ts';
import { clientError } from '../../pipeline/retries.ts';
import { SlicedHolds } from '../../pipeline/sliced.ts';
import { defaultModelId } from '../models.ts';
import { PREFERRED_REALTIME_MODELS, realtimeEndpoint, resolveRealtimeModel } from './endpoint.ts';
import { type AudioMeter, codedMeter, pcmMeter } from './meter.ts';
import { perMillionSeconds, realtimeRate } from './pricing.ts';
import { PCM_BYTES_PER_SAMPLE, type RealtimeQuery } from './request.ts';
import { audioSlices } from './slices.ts';

export interface PreparedStream {
  model: CatalogModel;
  adapter: LiveAdapter;
  upstream: WebSocket;
  holds: SlicedHolds;
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
  const unitPrice = perMillionSeconds(realtimeRate(model) as bigint);
  // The stream's money is the pipeline's, held in slices; realtime gives its meter, slice sizes and price.
  const hold = (byok: boolean) =>
    SlicedHolds.start(
      deps.spending,
      context,
      audioSlices(model, meter, unitPrice, {
        discount: byok ? 'byok' : 'none',
        log,
        // What an operator's credential used counts towards its limits (an own key's is the requester's business).
        ...(!byok && {
          onSettled: (charge: Charge, seconds: number, credential: string) =>
            deps.credentials?.used(model.provider, credential, seconds, charge.passThroughNanos),
        }),
      }),
    );
  const options: LiveOptions = {
    encoding: query.encoding,
    sampleRate: query.sample_rate,
    channels: query.channels,
    interimResults: query.interim_results,
    language: query.language,
  };
  const candidate = { model, upstream: target };
  const open = (on: typeof candidate) => adapter.open(on.upstream, options, context.signal);
  const own = ownKeyRoute(deps.ownKeys, context.auth, candidate);
  const started = performance.now();
  const attempt = async <T>(holds: SlicedHolds, call: () => Promise<T>): Promise<T> => {
    try {
      const result = await call();
      deps.health.record(model.provider, performance.now() - started, true);
      return result;
    } catch (error) {
      if (!context.signal.aborted) deps.health.record(model.provider, performance.now() - started, false);
      await holds.abandon();
      throw error;
    }
  };
  try {
    if (own) {
      // The requester's own key first, its slices held and charged the fee alone (docs/providers.md).
      const holds = await hold(true);
      try {
        const opened = await attempt(holds, () =>
          withOwnKey(undefined, { ...own, fallback: false }, candidate, open),
        );
        holds.runsOn(opened.credential);
        return { model, adapter, upstream: opened.result, holds, meter };
      } catch (error) {
        if (!own.fallback || !givesWay(error)) throw error;
      }
    }
    // The operator's pool: a credential the provider refuses or rate limits gives way to the next, and the one
    // the stream opens on is named by every slice's charge.
    const holds = await hold(false);
    const opened = await attempt(holds, () => withCredential(deps.credentials, candidate, open));
    holds.runsOn(opened.credential);
    return { model, adapter, upstream: opened.result, holds, meter };
  } catch (error) {
    throw clientError(error, model.id);
  }
}
