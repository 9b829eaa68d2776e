import { allowsModel } from '../accounts/model-access.ts';
import { type ChatDeps, completeChat } from '../chat/complete.ts';
import { findChatModel, resolveChatModel } from '../chat/models.ts';
import type { Discount } from '../contracts/money.ts';
import type { CallContext } from '../pipeline/types.ts';

/** How a comparison was scored, and what judging it cost (billed like the target, recorded on the replay). */
export interface Score {
  /** score(target) − score(source), −1..1. */
  delta: number;
  scoring: 'judge' | 'similarity';
  judge: { model: string; prompt: string; costNanos: bigint } | null;
}

export const JUDGE_SYSTEM =
  'You compare two answers to the same request. Reply with exactly one word: A if answer A is better, ' +
  'B if answer B is better, TIE if neither is.';

/** The longest the judge sees of each text, so that a long exchange cannot make the judge's hold unbounded. */
const MAX_CHARS = 8_000;
const clip = (text: string) => (text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS)}…` : text);

export function judgePrompt(asked: string, a: string, b: string): string {
  return `Request:\n${clip(asked)}\n\nAnswer A:\n${clip(a)}\n\nAnswer B:\n${clip(b)}`;
}

/**
 * The judge: `GATEWAY_JUDGE_MODEL` (`off` for none), else the available chat model with the highest output price,
 * the catalog's nearest measure of the strongest, among those that take sampling parameters: a judge is asked at
 * temperature 0 for a one-word answer, which a model that refuses them (OpenAI's o-series) would turn down, and its
 * reasoning would spend the few tokens allowed. Undefined when no such paid chat model is reachable. Its calls are
 * the key's own, so it is one of the models the key may use (`allowed`), or none.
 */
export function judgeModel(deps: ChatDeps, allowed: readonly string[] | null = null): string | undefined {
  const configured = deps.env.GATEWAY_JUDGE_MODEL?.trim();
  if (configured === 'off') return undefined;
  if (configured) {
    return allowed === null || allowsModel(allowed, catalogId(deps, configured)) ? configured : undefined;
  }
  let best: { id: string; price: number } | undefined;
  for (const model of deps.catalog.all()) {
    if (model.modality !== 'text' || model.provider === 'local' || model.quirks.noSampling) continue;
    if (!allowsModel(allowed, model.id)) continue;
    const price = model.prices.outputNanosPerMillion;
    if (price === null || (best && Number(price) <= best.price)) continue;
    try {
      resolveChatModel(deps.catalog, deps.env, deps.timeoutMs, model.id);
    } catch {
      continue;
    }
    best = { id: model.id, price: Number(price) };
  }
  return best?.id;
}

/** The catalog id a model name resolves to (a bare id to its maker's), else the name as given. */
function catalogId(deps: ChatDeps, name: string): string {
  try {
    return findChatModel(deps.catalog, deps.env, name)?.id ?? name;
  } catch {
    return name;
  }
}

/**
 * The sampling parameters of a grading call: temperature 0, the most repeatable answer, except for a model that
 * refuses sampling parameters (one named by `GATEWAY_JUDGE_MODEL` or a grader), which gets none rather than a 400.
 */
export function gradingSampling(deps: ChatDeps, model: string): { temperature?: number } {
  return findChatModel(deps.catalog, deps.env, model)?.quirks.noSampling ? {} : { temperature: 0 };
}

/** What a reasoning model may think before its few words of grade: 2,048 tokens at most, charged as used. */
const REASONING_ROOM_TOKENS = 2_048;

/**
 * The output limit of a grading call: the tokens of its answer, and for a reasoning model room to think first, since
 * its reasoning comes out of the same limit (OpenAI's `max_completion_tokens`) and would leave no answer at all.
 */
export function gradingLimit(deps: ChatDeps, model: string, answerTokens: number): number {
  return findChatModel(deps.catalog, deps.env, model)?.quirks.reasoning
    ? answerTokens + REASONING_ROOM_TOKENS
    : answerTokens;
}

type Verdict = 'A' | 'B' | 'TIE' | undefined;

/** The delta from the two verdicts: the target is B in the first order and A in the second. */
export function pairwiseDelta(first: Verdict, second: Verdict): number {
  const targetFirst = first === 'B' ? 1 : first === 'A' ? 0 : 0.5;
  const targetSecond = second === 'A' ? 1 : second === 'B' ? 0 : 0.5;
  const contradict = Math.abs(targetFirst - targetSecond) === 1;
  const mean = contradict ? 0.5 : (targetFirst + targetSecond) / 2;
  return 2 * mean - 1;
}

export function readVerdict(reply: string): Verdict {
  const word = /\b(A|B|TIE)\b/.exec(reply.trim().toUpperCase().slice(0, 40));
  return word ? (word[1] as Verdict) : undefined;
}

/**
 * Pairwise, asked twice with the answers swapped, so that a judge's preference for a position cancels out: each
 * order gives the target 1 (better), ½ (tie or an unreadable reply) or 0; orders that contradict each other count
 * as a tie. The target's score is the mean, the source's its complement, so the delta is 2·mean − 1.
 */
export async function score(
  deps: ChatDeps,
  context: CallContext,
  discount: Discount,
  asked: string,
  source: string,
  target: string,
): Promise<Score> {
  const model = judgeModel(deps, deps.spending.allowedModels(context.auth));
  if (!model) return { delta: similarityDelta(source, target), scoring: 'similarity', judge: null };
  let costNanos = 0n;
  const ask = async (a: string, b: string, n: number): Promise<Verdict> => {
    const served = await completeChat(
      deps,
      // Not the client's request log entry: that is the target call's.
      {
        auth: context.auth,
        requestId: `${context.requestId}-judge${n}`,
        tag: context.tag,
        signal: context.signal,
      },
      {
        model,
        messages: [
          { role: 'system', content: JUDGE_SYSTEM },
          { role: 'user', content: judgePrompt(asked, a, b) },
        ],
        max_tokens: gradingLimit(deps, model, 4),
        ...gradingSampling(deps, model),
      },
      discount,
    );
    costNanos += served.costNanos;
    const content = (served.completion.choices[0] as { message?: { content?: unknown } } | undefined)?.message
      ?.content;
    return readVerdict(typeof content === 'string' ? content : '');
  };
  const prompt = `${JUDGE_SYSTEM}\n\n${judgePrompt(asked, 'source', 'target')}`;
  try {
    const first = await ask(source, target, 1); // target is B
    const second = await ask(target, source, 2); // target is A
    return { delta: pairwiseDelta(first, second), scoring: 'judge', judge: { model, prompt, costNanos } };
  } catch {
    // A judge that cannot answer (refused, down) leaves the comparison to similarity; the judge stays named, with
    // what it cost, so that a failed judge reads apart from no judge at all.
    return {
      delta: similarityDelta(source, target),
      scoring: 'similarity',
      judge: { model, prompt, costNanos },
    };
  }
}

const words = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);

/**
 * Without a judge the source is the reference (score 1) and the target scores the Jaccard similarity of its words
 * to the source's, so the delta is similarity − 1: 0 for the same answer, down to −1 for nothing in common.
 */
export function similarityDelta(source: string, target: string): number {
  const a = words(source);
  const b = words(target);
  if (a.size === 0 && b.size === 0) return 0;
  let shared = 0;
  for (const word of a) if (b.has(word)) shared += 1;
  return shared / (a.size + b.size - shared) - 1;
}
