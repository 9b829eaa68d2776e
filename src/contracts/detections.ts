import type { ModalityCall } from './modality.ts';

export interface DetectCall extends ModalityCall {
  image: Buffer;
  maxResults: number;
}

/** A box as fractions of the image's width and height, origin at the top left. */
export interface Box {
  x_min: number;
  y_min: number;
  x_max: number;
  y_max: number;
}

export interface DetectedObject {
  label: string;
  score: number;
  box: Box;
  /** The provider's id for the label (Google's Knowledge Graph `mid`), when it gives one. */
  labelId: string | undefined;
}

export interface DetectionAdapter {
  detect(call: DetectCall): Promise<DetectedObject[]>;
}
