import { findNamedModel } from '../../catalog/bare-ids.ts';
import { endpointOf } from '../../catalog/capabilities.ts';
import { RequestRefused } from '../../contracts/errors.ts';
import type {
  ImageFile,
  ImageGenerationCall,
  ImagesAdapter,
  ProducedImages,
} from '../../contracts/images.ts';
import type { BlobStore } from '../../files/blob-store.ts';
import type { Upload } from '../../files/upload.ts';
import type { MediaUrls } from '../../media/signed-urls.ts';
import { type ModalityDeps, pricedCall, type RequestContext, type Served } from '../../pipeline/priced.ts';
import { UpstreamError } from '../../providers/errors.ts';
import {
  defaultModelId,
  type EndpointSpec,
  type ModalityTarget,
  resolveModalityModel,
  servable,
} from '../models.ts';
import {
  editsEndpoint,
  generationsEndpoint,
  PREFERRED_EDIT_MODELS,
  PREFERRED_GENERATION_MODELS,
} from './endpoint.ts';
import { jsonImageInput } from './inputs.ts';
import { deliverImages, type ImageDatum } from './output.ts';
import { imagePricing } from './pricing.ts';
import type {
  ImageEditJsonRequest,
  ImageGenerationRequest,
  ImageRequestFields,
  ImagesResponse,
} from './request.ts';
import { type ImageOptions, type ImageRules, imageOptions, rulesOf } from './rules.ts';

export interface ImagesDeps extends ModalityDeps {
  blobs: BlobStore;
  media: MediaUrls;
}

interface Resolved {
  target: ModalityTarget<ImagesAdapter>;
  rules: ImageRules;
  options: ImageOptions;
}

/** The model (named, or the endpoint's default) checked for this endpoint, and the request's options for it. */
function resolve(
  deps: ImagesDeps,
  endpoint: EndpointSpec<ImagesAdapter>,
  preferred: string[],
  body: ImageRequestFields,
): Resolved {
  const id = body.model ?? defaultModelId(deps, endpoint, preferred);
  const model = findNamedModel(deps.catalog, id, {
    servable: (candidate) => servable(deps.env, endpoint, candidate),
    fits: (candidate) => candidate.modality === 'image',
  });
  const capability = endpoint === editsEndpoint ? 'image-editing' : 'image-generation';
  if (model?.modality === 'image' && !model.capabilities.includes(capability)) {
    const right = endpointOf(model.capabilities);
    throw new RequestRefused(
      'invalid',
      `'model': ${model.id} cannot ${capability === 'image-editing' ? 'edit' : 'generate'} images; call it with ${right.method} ${right.path}`,
    );
  }
  const target = resolveModalityModel(deps, endpoint, model?.id ?? id);
  const rules = rulesOf(target.model) as ImageRules;
  return { target, rules, options: imageOptions(target.model, rules, body) };
}

/** One billed call: n images of the size and quality held, what came back settled, then stored or encoded. */
async function serve(
  deps: ImagesDeps,
  context: RequestContext,
  { target, rules, options }: Resolved,
  prompt: string,
  inputImages: number,
  call: (base: ImageGenerationCall) => Promise<ProducedImages>,
): Promise<Served<ImagesResponse>> {
  const pricing = imagePricing(target.model, rules, { prompt, ...options, inputImages });
  const served = await pricedCall(
    deps,
    context,
    target,
    pricing.worstCase,
    async (upstream) => {
      const produced = await call({
        prompt,
        n: options.n,
        size: options.size,
        quality: options.quality,
        style: options.style,
        upstream,
        signal: context.signal,
      });
      if (produced.images.length === 0 || produced.images.length > options.n) {
        throw new UpstreamError(
          'server',
          `the provider answered ${produced.images.length} images for ${options.n} asked`,
        );
      }
      // Stored inside the billed call: a result that cannot be stored is a failed call, and its hold is released.
      const data: ImageDatum[] = await deliverImages(
        produced.images,
        options.responseFormat,
        context.requestId,
        deps,
        context.signal,
      );
      return { produced, data };
    },
    ({ produced }) => ({ ...pricing.settle(produced), units: produced.images.length }),
  );
  return { ...served, result: { created: Math.floor(Date.now() / 1000), data: served.result.data } };
}

/** `POST /v1/images/generations`. */
export function createImages(
  deps: ImagesDeps,
  context: RequestContext,
  body: ImageGenerationRequest,
): Promise<Served<ImagesResponse>> {
  const resolved = resolve(deps, generationsEndpoint, PREFERRED_GENERATION_MODELS, body);
  const adapter = resolved.target.adapter;
  return serve(deps, context, resolved, body.prompt, 0, (call) => {
    if (!adapter.generate) throw new Error('adapter without generate');
    return adapter.generate(call);
  });
}

export interface EditInputs {
  image: Upload;
  mask: Upload | undefined;
}

async function fileOf(blobs: BlobStore, upload: Upload): Promise<ImageFile> {
  return { blob: await blobs.blob(upload.key, upload.mimetype), filename: upload.filename };
}

/**
 * `POST /v1/images/edits`, with the inputs already in the blob store (multipart) or named in the body (JSON: fetched
 * or decoded once the model and options are known to be right). Inputs are removed once the call is over.
 */
export async function editImages(
  deps: ImagesDeps,
  context: RequestContext,
  body: ImageRequestFields,
  inputs: EditInputs | { json: ImageEditJsonRequest },
): Promise<Served<ImagesResponse>> {
  const resolved = resolve(deps, editsEndpoint, PREFERRED_EDIT_MODELS, body);
  const stored: Upload[] = [];
  try {
    let files: EditInputs;
    if ('json' in inputs) {
      const image = await jsonImageInput(inputs.json.image, 'image', deps, context.signal);
      stored.push(image);
      const mask = inputs.json.mask
        ? await jsonImageInput(inputs.json.mask, 'mask', deps, context.signal)
        : undefined;
      if (mask) stored.push(mask);
      files = { image, mask };
    } else {
      files = inputs;
    }
    const image = await fileOf(deps.blobs, files.image);
    const mask = files.mask ? await fileOf(deps.blobs, files.mask) : undefined;
    const adapter = resolved.target.adapter;
    return await serve(deps, context, resolved, body.prompt, mask ? 2 : 1, (call) => {
      if (!adapter.edit) throw new Error('adapter without edit');
      return adapter.edit({ ...call, image, mask });
    });
  } finally {
    await Promise.all(stored.map((upload) => deps.blobs.remove(upload.key)));
  }
}
