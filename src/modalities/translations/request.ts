import { z } from 'zod';
import type { TaskUsage } from '../chat-task.ts';

/** A language tag: `de`, `EN-US`, `pt-BR`, `zh-Hans` (case does not matter). */
const LANGUAGE = /^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$/;
const language = z.string().regex(LANGUAGE, 'must be a language code such as de, en-US or pt-BR');

export const TranslationRequest = z
  .object({
    model: z.string().min(1).optional(),
    text: z.string().min(1, 'must not be empty'),
    /** `auto` lets the model detect it. */
    source_lang: z.union([z.literal('auto'), language]),
    target_lang: language,
  })
  .loose();
export type TranslationRequest = z.infer<typeof TranslationRequest>;

/**
 * `source_lang` is the language the provider detected when it says (DeepL always does), else the request's.
 * `usage` is in the unit the call was billed in: `characters` (DeepL) or tokens (a chat model).
 */
export interface TranslationResponse {
  object: 'translation';
  model: string;
  text: string;
  source_lang: string;
  target_lang: string;
  usage: { characters: number; estimated?: true } | TaskUsage;
}
