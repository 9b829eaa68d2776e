import type { ChatBody, Upstream } from '../../contracts/chat.ts';

/** Fields only the gateway understands; never sent upstream. */
const GATEWAY_FIELDS = ['cache', 'webhook_url', 'baseline_model', 'models'] as const;
const SAMPLING_FIELDS = ['temperature', 'top_p'] as const;
const OUTPUT_LIMIT_FIELDS = ['max_tokens', 'max_completion_tokens'] as const;

/** The spec's reasoning efforts onto OpenAI's scale (minimal, low, medium, high). */
const REASONING_EFFORT: Record<string, string> = {
  none: 'minimal',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'high',
  max: 'high',
};

/** The client's request as an OpenAI-compatible provider takes it, following the model's quirks. */
export function toOpenAiRequest(
  body: ChatBody,
  upstream: Upstream,
  stream: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body, model: upstream.model };
  for (const field of GATEWAY_FIELDS) delete out[field];
  const limit = body.max_completion_tokens ?? body.max_tokens;
  for (const field of OUTPUT_LIMIT_FIELDS) delete out[field];
  if (limit !== undefined) out[upstream.quirks.maxTokensField] = limit;
  if (upstream.quirks.noSampling) for (const field of SAMPLING_FIELDS) delete out[field];
  if (typeof body.reasoning_effort === 'string') {
    if (upstream.quirks.reasoning) out.reasoning_effort = REASONING_EFFORT[body.reasoning_effort] ?? 'medium';
    else delete out.reasoning_effort;
  }
  if (stream) {
    out.stream = true;
    // Usage is what the request is billed on: always ask for it, whatever the client asked.
    out.stream_options = { ...(body.stream_options as object | undefined), include_usage: true };
  } else {
    delete out.stream;
    delete out.stream_options;
  }
  return out;
}
