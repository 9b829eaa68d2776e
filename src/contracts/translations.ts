import type { ModalityCall } from './modality.ts';

export interface TranslateCall extends ModalityCall {
  text: string;
  /** Undefined: the provider detects it. */
  sourceLang: string | undefined;
  targetLang: string;
}

export interface Translated {
  text: string;
  /** The source language as the provider names it, when it says. */
  detectedSourceLang: string | undefined;
  /** Characters as the provider billed them; undefined when it did not say (never a silent zero). */
  billedCharacters: number | undefined;
}

/** A machine-translation API (not a chat model: those are reached through the chat path). */
export interface TranslationAdapter {
  translate(call: TranslateCall): Promise<Translated>;
}
