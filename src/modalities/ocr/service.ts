import { unitLine } from '../../catalog/unit-models.ts';
import type { ChatDeps } from '../../chat/complete.ts';
import { RequestRefused } from '../../contracts/errors.ts';
import type { OcrDocument } from '../../contracts/ocr.ts';
import { pricedCall, type RequestContext, type Served } from '../../pipeline/priced.ts';
import { checkImageUrl, decodeImageB64 } from '../image-input.ts';
import { defaultModelId, resolveModalityModel } from '../models.ts';
import { ocrEndpoint, PREFERRED_OCR_MODELS } from './endpoint.ts';
import { MAX_OCR_PAGES, type OcrRequest, type OcrResponse } from './request.ts';

/** Mistral's limit on a document's size (https://docs.mistral.ai/capabilities/document_ai/basic_ocr). */
export const MAX_OCR_BYTES = 50 * 1024 * 1024;

/** URL paths read as documents (Mistral's `document_url`); any other URL is sent as an image. */
const DOCUMENT_PATH = /\.(pdf|docx?|pptx?|odt)$/i;

/**
 * A PDF's page count as its uncompressed structure states it: the larger of its page objects and its page trees'
 * `/Count`. Undefined when neither is readable (both can sit in compressed object streams).
 */
export function pdfPageCount(data: Buffer): number | undefined {
  const text = data.toString('latin1');
  const pageObjects = text.match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
  const counts = [
    ...text.matchAll(/\/Type\s*\/Pages\b[^>]*?\/Count\s+(\d+)|\/Count\s+(\d+)[^>]*?\/Type\s*\/Pages\b/g),
  ]
    .map((m) => Number(m[1] ?? m[2]))
    .filter(Number.isSafeInteger);
  const pages = Math.max(pageObjects, ...counts, 0);
  return pages > 0 ? pages : undefined;
}

interface Prepared {
  document: OcrDocument;
  /** The most pages the call can be billed. */
  worstPages: number;
}

async function prepare(deps: ChatDeps, body: OcrRequest): Promise<Prepared> {
  const selected = body.pages?.length;
  if (body.image_url !== undefined) {
    // Mistral fetches the URL itself: the gateway only checks it, so the page count is unknown until it answers.
    const url = await checkImageUrl(body.image_url, deps.env);
    const kind = DOCUMENT_PATH.test(url.pathname) ? 'document' : 'image';
    return {
      document: { kind, url: url.toString() },
      worstPages: kind === 'image' ? 1 : (selected ?? MAX_OCR_PAGES),
    };
  }
  const { data, mediaType } = decodeImageB64(body.image_b64 ?? '', MAX_OCR_BYTES);
  if (mediaType === 'application/pdf') {
    return {
      document: { kind: 'document', url: `data:application/pdf;base64,${data.toString('base64')}` },
      worstPages: Math.min(selected ?? pdfPageCount(data) ?? MAX_OCR_PAGES, MAX_OCR_PAGES),
    };
  }
  if (mediaType?.startsWith('image/')) {
    return {
      document: { kind: 'image', url: `data:${mediaType};base64,${data.toString('base64')}` },
      worstPages: 1,
    };
  }
  throw new RequestRefused(
    'invalid',
    "'image_b64': not a PDF or an image the gateway recognises (PNG, JPEG, GIF, WebP, AVIF, BMP, TIFF)",
  );
}

/** Reads the text of an image or a document, billed per page. */
export async function createOcr(
  deps: ChatDeps,
  context: RequestContext,
  body: OcrRequest,
): Promise<Served<OcrResponse>> {
  const id = body.model ?? defaultModelId(deps, ocrEndpoint, PREFERRED_OCR_MODELS);
  const target = resolveModalityModel(deps, ocrEndpoint, id);
  const { document, worstPages } = await prepare(deps, body);
  const perPage = target.model.prices.perUnitNanos?.page ?? 0n;
  const served = await pricedCall(
    deps,
    context,
    target,
    [unitLine('pages', worstPages, perPage)],
    (upstream) =>
      target.adapter.read({
        document,
        pages: document.kind === 'document' ? body.pages : undefined,
        upstream,
        signal: context.signal,
      }),
    (result) => {
      const units = result.pagesProcessed ?? result.pages.length;
      return {
        lines: [unitLine('pages', units, perPage)],
        usageReported: result.pagesProcessed !== undefined,
        units,
      };
    },
  );
  const { pages, pagesProcessed } = served.result;
  return {
    ...served,
    result: {
      object: 'ocr',
      model: target.model.id,
      text: pages.map((p) => p.markdown).join('\n\n'),
      pages: pages.map((p) => ({ index: p.index, text: p.markdown })),
      usage: {
        pages: pagesProcessed ?? pages.length,
        ...(pagesProcessed === undefined && { estimated: true as const }),
      },
    },
  };
}
