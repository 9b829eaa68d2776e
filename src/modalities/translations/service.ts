import { findModel } from '../../catalog/extra-models.ts';
import { unitLine } from '../../catalog/unit-models.ts';
import type { ChatDeps } from '../../chat/complete.ts';
import { RequestRefused } from '../../contracts/errors.ts';
import { pricedCall, type RequestContext, type Served } from '../../pipeline/priced.ts';
import { countTextTokensAsync } from '../../tokens/count.ts';
import { askChatModel, defaultTaskChatModel, taskChatModel, unusableAnswer } from '../chat-task.ts';
import { resolveModalityModel, servable } from '../models.ts';
import { PREFERRED_TRANSLATION_MODELS, translationEndpoint } from './endpoint.ts';
import type { TranslationRequest, TranslationResponse } from './request.ts';

const ENDPOINT = { path: '/v1/translations', takes: 'a translation model or a chat model' };

/**
 * The model used when the request names none: DeepL when it has a key, else the first preferred chat model this
 * gateway can reach (the LLM path), else a 400 saying what to configure.
 */
export function defaultTranslationModel(deps: Pick<ChatDeps, 'catalog' | 'env'>): string {
  const deepl = PREFERRED_TRANSLATION_MODELS.map((id) => findModel(deps.catalog, id)).find(
    (model) => model !== undefined && servable(deps.env, translationEndpoint, model),
  );
  const id = deepl?.id ?? defaultTaskChatModel(deps);
  if (id === undefined) {
    throw new RequestRefused(
      'invalid',
      "'model': no translation model is available on this gateway; set DEEPL_API_KEY or a chat provider's key, or name a model",
    );
  }
  return id;
}

/** Translates the text with a machine-translation API (billed per character) or a chat model (billed per token). */
export async function createTranslation(
  deps: ChatDeps,
  context: RequestContext,
  body: TranslationRequest,
): Promise<Served<TranslationResponse>> {
  const id = body.model ?? defaultTranslationModel(deps);
  if (findModel(deps.catalog, id)?.modality === 'translation')
    return viaTranslationApi(deps, context, body, id);
  return viaChatModel(deps, context, body, id);
}

/** DeepL takes a bare source language (`EN`, not `EN-US`) and upper-case codes. */
const sourceCode = (lang: string) => (lang.split(/[-_]/)[0] ?? lang).toUpperCase();
const targetCode = (lang: string) => lang.replaceAll('_', '-').toUpperCase();

async function viaTranslationApi(
  deps: ChatDeps,
  context: RequestContext,
  body: TranslationRequest,
  id: string,
): Promise<Served<TranslationResponse>> {
  const target = resolveModalityModel(deps, translationEndpoint, id);
  const perCharacter = target.model.prices.perUnitNanos?.character ?? 0n;
  // DeepL bills the source text's Unicode code points, which the gateway counts exactly.
  const counted = [...body.text].length;
  const served = await pricedCall(
    deps,
    context,
    target,
    [unitLine('characters', counted, perCharacter)],
    (upstream) =>
      target.adapter.translate({
        text: body.text,
        sourceLang: body.source_lang === 'auto' ? undefined : sourceCode(body.source_lang),
        targetLang: targetCode(body.target_lang),
        upstream,
        signal: context.signal,
      }),
    (translated) => {
      const units = translated.billedCharacters ?? counted;
      return {
        lines: [unitLine('characters', units, perCharacter)],
        usageReported: translated.billedCharacters !== undefined,
        units,
      };
    },
  );
  const translated = served.result;
  return {
    ...served,
    result: {
      object: 'translation',
      model: target.model.id,
      text: translated.text,
      source_lang: translated.detectedSourceLang ?? body.source_lang,
      target_lang: body.target_lang,
      usage: {
        characters: translated.billedCharacters ?? counted,
        ...(translated.billedCharacters === undefined && { estimated: true as const }),
      },
    },
  };
}

const names = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'code' });

function languageName(code: string): string {
  try {
    const name = names.of(code.replaceAll('_', '-'));
    return name && name.toLowerCase() !== code.toLowerCase() ? `${name} (${code})` : code;
  } catch {
    return code;
  }
}

async function viaChatModel(
  deps: ChatDeps,
  context: RequestContext,
  body: TranslationRequest,
  id: string,
): Promise<Served<TranslationResponse>> {
  const model = taskChatModel(deps, id, ENDPOINT, []);
  const from =
    body.source_lang === 'auto' ? 'whatever language it is written in' : languageName(body.source_lang);
  const served = await askChatModel(deps, context, {
    model,
    system: [
      `You are a translation engine. Translate the user's message from ${from} into ${languageName(body.target_lang)}.`,
      'Reply with the translation only: no quotes, notes or explanations.',
      'Keep line breaks, formatting, markup and placeholders as they are.',
    ].join(' '),
    user: body.text,
    // Room for a translation several times longer in tokens than its source (scripts tokenize very differently).
    maxTokens: 4 * (await countTextTokensAsync(body.text)) + 256,
  });
  const answer = served.result;
  if (answer.finishReason === 'length') {
    throw unusableAnswer(served, 'the translation was cut off at the output limit');
  }
  if (answer.text.trim() === '') throw unusableAnswer(served, 'the model answered no translation');
  return {
    ...served,
    result: {
      object: 'translation',
      model: served.model.id,
      text: answer.text,
      source_lang: body.source_lang,
      target_lang: body.target_lang,
      usage: answer.usage,
    },
  };
}
