/**
 * How demanding a request looks, from 0 (a short plain question) to 1, read from its text alone so that it costs
 * microseconds: the length of the last user turn, code, mathematics, markers of multi-step reasoning, the depth
 * of the conversation and the reasoning effort asked for. Only the first 16,000 characters are read.
 */
const READ_CHARS = 16_000;
const CODE = /```|\b(?:function|def|class|import|return|const|SELECT|#include)\b|[{};]\s*$|=>/m;
const MATH =
  /\\(?:frac|sum|int|sqrt)|\b(?:prove|theorem|integral|derivative|equation|matrix|probability)\b|\d\s*[-+*/^=]\s*\d/i;
const STEPS =
  /\b(?:step[- ]by[- ]step|explain why|analy[sz]e|compare|trade-?offs?|design|plan|first\b.*\bthen|reason through|in detail)\b/i;

export interface ComplexityInput {
  lastUserText: string;
  messages: number;
  reasoningEffort?: string;
}

export function estimateComplexity(input: ComplexityInput): number {
  const text =
    input.lastUserText.length > READ_CHARS ? input.lastUserText.slice(0, READ_CHARS) : input.lastUserText;
  let score = Math.min(0.35, (text.length / 8_000) * 0.35);
  if (CODE.test(text)) score += 0.25;
  if (MATH.test(text)) score += 0.2;
  if (STEPS.test(text)) score += 0.2;
  score += Math.min(0.1, Math.max(0, input.messages - 1) * 0.02);
  if (
    input.reasoningEffort === 'high' ||
    input.reasoningEffort === 'xhigh' ||
    input.reasoningEffort === 'max'
  )
    score += 0.2;
  return Math.round(Math.min(1, score) * 100) / 100;
}
