import type { ModalityCall } from './modality.ts';

/**
 * The contract between the images endpoints and the provider adapters. The request's options arrive already
 * checked against the model's rules (rules.ts) and in the provider's own vocabulary.
 */

/** A file the gateway holds in its blob store, sent upstream as a file-backed Blob. */
export interface ImageFile {
  blob: Blob;
  filename: string;
}

export interface ImageGenerationCall extends ModalityCall {
  prompt: string;
  n: number;
  /** `WxH`, or undefined for the provider's default. */
  size: string | undefined;
  quality: string | undefined;
  style: string | undefined;
}

export interface ImageEditCall extends ImageGenerationCall {
  image: ImageFile;
  mask: ImageFile | undefined;
}

/** One image as the provider gave it: base64, bytes (streamed), or a URL of its own to download. */
export type ProducedImage = (
  | { b64: string }
  | { bytes: AsyncIterable<Uint8Array> | Uint8Array; contentType: string | undefined }
  | { url: string }
) & { revisedPrompt?: string };

export interface ProducedImages {
  images: ProducedImage[];
  /** The size and quality the provider says it produced (GPT image models with `auto`). */
  size?: string;
  quality?: string;
  /** Input tokens as the provider billed them (GPT image models); undefined figures were not reported. */
  textTokens?: number;
  imageTokens?: number;
}

export interface ImagesAdapter {
  generate?(call: ImageGenerationCall): Promise<ProducedImages>;
  edit?(call: ImageEditCall): Promise<ProducedImages>;
}
