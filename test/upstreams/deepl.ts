import { type Incoming, type Reply, startUpstream } from './harness.ts';
import { isObj } from './model.ts';
import type { Upstream } from './types.ts';

/**
 * DeepL's `POST /v2/translate` (JSON body), as https://developers.deepl.com/api-reference/translate describes it:
 * `Authorization: DeepL-Auth-Key <key>`, `{text: [...], target_lang, source_lang?, show_billed_characters?}` →
 * `{translations: [{detected_source_language, text, billed_characters?}]}`; errors are `{message}` with 403
 * (bad key), 456 (quota exceeded), 429, 413 and 400. The base URL is `url` (no version path).
 *
 * Its "translation" of a text is `[<TARGET_LANG>] <text>`; the detected source language is the one given, else
 * `EN`; billed characters are the text's Unicode code points.
 */
export function startDeeplUpstream(): Promise<Upstream> {
  return startUpstream({ handle, errorReply, rateLimited });
}

function handle(request: Incoming): Reply {
  if (`${request.method} ${request.path}` !== 'POST /v2/translate') return message(404, 'Not found');
  if (!/^DeepL-Auth-Key\s+\S+/.test(request.headers.authorization ?? '')) return errorReply(403);
  const body = request.body;
  if (request.invalidJson || !isObj(body)) return message(400, 'Invalid request body.');
  const texts = body.text;
  if (!Array.isArray(texts) || texts.length === 0 || !texts.every((t) => typeof t === 'string')) {
    return message(400, "Parameter 'text' not specified.");
  }
  const target = body.target_lang;
  if (typeof target !== 'string' || !/^[A-Z]{2}(-[A-Z]{2,4})?$/.test(target)) {
    return message(400, "Value for 'target_lang' not supported.");
  }
  const source = body.source_lang;
  if (source !== undefined && (typeof source !== 'string' || !/^[A-Z]{2}$/.test(source))) {
    return message(400, "Value for 'source_lang' not supported.");
  }
  const billed = body.show_billed_characters === true;
  const translations = texts.map((text: string) => ({
    detected_source_language: source ?? 'EN',
    text: `[${target}] ${text}`,
    ...(billed && { billed_characters: [...text].length }),
  }));
  return { status: 200, body: { translations } };
}

function message(status: number, text: string, headers: Record<string, string> = {}): Reply {
  return { status, headers, body: { message: text } };
}

const MESSAGES: Record<number, string> = {
  403: 'Authorization failed. Please supply a valid auth_key parameter.',
  413: 'Request Entity Too Large',
  429: 'Too many requests. Please wait and resend your request.',
  456: 'Quota exceeded. The character limit has been reached.',
};

function errorReply(status: number): Reply {
  return message(status, MESSAGES[status] ?? (status >= 500 ? 'Internal server error' : 'Bad request'));
}

function rateLimited(retryAfterSeconds: number): Reply {
  return message(429, MESSAGES[429] as string, { 'retry-after': String(retryAfterSeconds) });
}
