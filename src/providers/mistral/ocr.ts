import { z } from 'zod';
import type { OcrAdapter } from '../../contracts/ocr.ts';
import { endpointUrl, postJson } from '../http.ts';
import { parseReply, reportedCount } from '../reply.ts';

const Reply = z.object({
  pages: z.array(z.object({ index: z.number().int().nonnegative(), markdown: z.string() })),
  usage_info: z.object({ pages_processed: z.unknown() }).partial().nullish(),
});

/**
 * Mistral's `POST {base}/ocr` (https://docs.mistral.ai/capabilities/document_ai/basic_ocr): a document by
 * `document_url` (PDF and office documents) or an image by `image_url`, either a public URL or a `data:` URL. It
 * answers one Markdown text per page and bills `usage_info.pages_processed`.
 */
export const mistralOcr: OcrAdapter = {
  async read({ document, pages, upstream, signal }) {
    const response = await postJson({
      url: endpointUrl(upstream.baseUrl, '/ocr'),
      headers: { authorization: `Bearer ${upstream.apiKey}` },
      body: {
        model: upstream.model,
        document:
          document.kind === 'document'
            ? { type: 'document_url', document_url: document.url }
            : { type: 'image_url', image_url: document.url },
        ...(pages !== undefined && { pages }),
        include_image_base64: false,
      },
      timeoutMs: upstream.timeoutMs,
      signal,
    });
    const reply = await parseReply(response, Reply, 'OCR pages');
    return {
      pages: [...reply.pages].sort((a, b) => a.index - b.index),
      pagesProcessed: reportedCount(reply.usage_info?.pages_processed),
    };
  },
};
