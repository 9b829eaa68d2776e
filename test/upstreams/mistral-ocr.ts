import type { Incoming, Reply } from './harness.ts';
import { isObj } from './model.ts';

/**
 * Mistral's `POST /v1/ocr` (https://docs.mistral.ai/capabilities/document_ai/basic_ocr), answered by the Mistral
 * simulator (mistral.ts): `{model, document: {type: 'document_url', document_url} | {type: 'image_url', image_url},
 * pages?}` → `{pages: [{index, markdown, images, dimensions}], model, usage_info: {pages_processed, doc_size_bytes}}`.
 *
 * An image is one page. A PDF sent as a data: URL has as many pages as `/Type /Page` objects (at least 1); a
 * document by http(s) URL has 3. `pages` keeps the listed pages that exist. Page i reads `Page <i+1> of <kind>`.
 */
export const URL_DOCUMENT_PAGES = 3;

export function ocrReply(request: Incoming, error: (status: number, message: string) => Reply): Reply {
  const body = request.body;
  if (request.invalidJson || !isObj(body)) return error(400, 'Invalid JSON body');
  if (typeof body.model !== 'string' || !body.model.startsWith('mistral-ocr')) {
    return error(400, `Invalid model: ${String(body.model)}`);
  }
  const document = body.document;
  if (!isObj(document)) return error(422, 'document: Field required');
  let count: number;
  let bytes: number | null = null;
  let kind: string;
  if (document.type === 'image_url' && typeof document.image_url === 'string') {
    kind = 'image';
    count = 1;
  } else if (document.type === 'document_url' && typeof document.document_url === 'string') {
    kind = 'document';
    const data = /^data:application\/pdf;base64,(.*)$/s.exec(document.document_url);
    if (data) {
      const pdf = Buffer.from(data[1] ?? '', 'base64');
      bytes = pdf.length;
      count = Math.max(1, pdf.toString('latin1').match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0);
    } else {
      count = URL_DOCUMENT_PAGES;
    }
  } else {
    return error(422, 'document: Input tag does not match any of the expected tags');
  }
  const wanted = Array.isArray(body.pages)
    ? body.pages.filter((p): p is number => typeof p === 'number')
    : undefined;
  const indices = (wanted ?? Array.from({ length: count }, (_, i) => i)).filter((i) => i < count);
  const pages = indices.map((index) => ({
    index,
    markdown: `Page ${index + 1} of ${kind}`,
    images: [],
    dimensions: { dpi: 200, height: 2200, width: 1700 },
  }));
  return {
    status: 200,
    body: { pages, model: body.model, usage_info: { pages_processed: pages.length, doc_size_bytes: bytes } },
  };
}
