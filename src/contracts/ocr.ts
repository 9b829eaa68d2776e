import type { ModalityCall } from './modality.ts';

/** What the provider reads: a URL it fetches itself, or the bytes as a `data:` URL; a document or an image. */
export interface OcrDocument {
  kind: 'document' | 'image';
  /** An http(s) URL already checked by the URL guard, or a `data:<type>;base64,` URL. */
  url: string;
}

export interface OcrCall extends ModalityCall {
  document: OcrDocument;
  /** 0-based pages to read; all when undefined. */
  pages: number[] | undefined;
}

export interface OcrResult {
  pages: { index: number; markdown: string }[];
  /** Pages as the provider billed them; undefined when it did not say. */
  pagesProcessed: number | undefined;
}

export interface OcrAdapter {
  read(call: OcrCall): Promise<OcrResult>;
}
