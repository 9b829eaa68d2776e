import { z } from 'zod';
import type { TranslationAdapter } from '../../contracts/translations.ts';
import { UpstreamError } from '../errors.ts';
import { postJson } from '../http.ts';
import { parseReply, reportedCount } from '../reply.ts';
import { deeplEndpoint } from './api.ts';

const Reply = z.object({
  translations: z
    .array(
      z.object({
        text: z.string(),
        detected_source_language: z.string().optional(),
        billed_characters: z.unknown(),
      }),
    )
    .length(1),
});

/**
 * DeepL's statuses that are the gateway's account's trouble, not the client's: 403 (the key was refused) and 456
 * (the character quota is used up) are the provider failing this gateway; 529 is DeepL's older "too many
 * requests". Anything else keeps its usual meaning (429 rate limited, 413 and 400 the request, 5xx the provider).
 */
function deeplFailure(error: unknown): unknown {
  if (!(error instanceof UpstreamError)) return error;
  switch (error.status) {
    case 403:
      return new UpstreamError('unavailable', `DeepL refused the gateway's key: ${error.message}`, 403);
    case 456:
      return new UpstreamError('unavailable', `DeepL's character quota is used up: ${error.message}`, 456);
    case 529:
      return new UpstreamError('rate_limited', error.message, 529, error.retryAfterMs);
    default:
      return error;
  }
}

/**
 * `POST /v2/translate` with a JSON body of one text. `show_billed_characters` asks DeepL for the characters it
 * bills (https://developers.deepl.com/api-reference/translate); without `source_lang` DeepL detects it.
 */
export const deeplTranslate: TranslationAdapter = {
  async translate({ text, sourceLang, targetLang, upstream, signal }) {
    const { url, headers } = deeplEndpoint(upstream, '/v2/translate');
    const response = await postJson({
      url,
      headers,
      body: {
        text: [text],
        target_lang: targetLang,
        ...(sourceLang !== undefined && { source_lang: sourceLang }),
        show_billed_characters: true,
      },
      timeoutMs: upstream.timeoutMs,
      signal,
    }).catch((error: unknown) => {
      throw deeplFailure(error);
    });
    const reply = await parseReply(response, Reply, 'a translation');
    const [translation] = reply.translations;
    if (!translation) throw new UpstreamError('server', 'DeepL answered without a translation');
    return {
      text: translation.text,
      detectedSourceLang: translation.detected_source_language,
      billedCharacters: reportedCount(translation.billed_characters),
    };
  },
};
