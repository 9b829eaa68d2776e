/**
 * Example requests and responses for a model, generated from its catalog entry (never written per model). Each
 * capability that is a model's main use has one builder; the values are illustrative, the shapes are the API's.
 */
import type { CapabilityId } from './capabilities.ts';
import type { CatalogModel } from './types.ts';

export interface Examples {
  request: Record<string, unknown>;
  response: unknown;
  /** SSE lines, for endpoints that stream. */
  stream: string | null;
}

const CREATED = 1_700_000_000;

function chat(model: CatalogModel): Examples {
  const request: Record<string, unknown> = {
    model: model.id,
    messages: [{ role: 'user', content: 'Say hello.' }],
    [model.quirks.maxTokensField]: 256,
  };
  // A model that rejects sampling parameters gets none: the minimal request must be valid for it.
  if (!model.quirks.noSampling) request.temperature = 0.7;
  const reasoning = model.quirks.reasoning;
  const message = {
    role: 'assistant',
    content: 'Hello! How can I help you today?',
    ...(reasoning ? { reasoning_content: 'The user wants a greeting.' } : {}),
  };
  const usage = {
    prompt_tokens: 11,
    completion_tokens: reasoning ? 73 : 9,
    total_tokens: reasoning ? 84 : 20,
    ...(reasoning ? { completion_tokens_details: { reasoning_tokens: 64 } } : {}),
  };
  const head = { id: 'chatcmpl-123', object: 'chat.completion.chunk', created: CREATED, model: model.id };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    ...head,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const events = [
    chunk({ role: 'assistant', content: '' }),
    ...(reasoning ? [chunk({ reasoning_content: 'The user wants a greeting.' })] : []),
    chunk({ content: 'Hello!' }),
    chunk({ content: ' How can I help you today?' }),
    chunk({}, 'stop'),
    { ...head, choices: [], usage },
  ];
  return {
    request,
    response: {
      id: 'chatcmpl-123',
      object: 'chat.completion',
      created: CREATED,
      model: model.id,
      choices: [{ index: 0, message, finish_reason: 'stop' }],
      usage,
    },
    stream: sse(events),
  };
}

const sse = (events: unknown[]) =>
  `${[...events.map((e) => JSON.stringify(e)), '[DONE]'].map((d) => `data: ${d}`).join('\n\n')}\n\n`;

const asyncJob = (request: Record<string, unknown>): Examples => ({
  request,
  response: { id: 'job_123', object: 'job', status: 'queued' },
  stream: null,
});

type Builder = (model: CatalogModel) => Examples;

const BUILDERS: Readonly<Record<string, Builder>> = {
  chat,
  embeddings: (model) => ({
    request: { model: model.id, input: 'The quick brown fox' },
    response: {
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.0123, -0.0456, 0.0789] }],
      model: model.id,
      usage: { prompt_tokens: 4, total_tokens: 4 },
    },
    stream: null,
  }),
  'image-generation': (model) => ({
    request: {
      model: model.id,
      prompt: 'A lighthouse at dawn',
      size: '1024x1024',
      n: 1,
      response_format: 'b64_json',
    },
    response: { created: CREATED, data: [{ b64_json: 'iVBORw0KGgo...' }] },
    stream: null,
  }),
  'speech-to-text': (model) => ({
    request: { model: model.id, audio_url: 'https://example.com/meeting.mp3', language: 'en' },
    response: { text: 'Hello and welcome to the meeting.' },
    stream: null,
  }),
  'realtime-transcription': (model) => ({
    request: { model: model.id, encoding: 'linear16', sample_rate: 16000, interim_results: true },
    response: { type: 'Results', is_final: true, channel: { alternatives: [{ transcript: 'hello world' }] } },
    stream: [
      JSON.stringify({
        type: 'Results',
        is_final: false,
        channel: { alternatives: [{ transcript: 'hello' }] },
      }),
      JSON.stringify({
        type: 'Results',
        is_final: true,
        channel: { alternatives: [{ transcript: 'hello world' }] },
      }),
      JSON.stringify({ type: 'Metadata', duration: 1.2 }),
    ].join('\n'),
  }),
  'text-to-speech': (model) => ({
    request: { model: model.id, input: 'Hello there!', voice: 'alloy', response_format: 'mp3' },
    response: '<binary audio, Content-Type: audio/mpeg>',
    stream: null,
  }),
  'text-to-music': (model) =>
    asyncJob({
      model: model.id,
      prompt: 'Calm piano for a rainy morning',
      duration: 30,
      is_instrumental: true,
    }),
  'text-to-video': (model) =>
    asyncJob({
      model: model.id,
      prompt: 'A paper boat drifting down a stream',
      duration: 5,
      aspect_ratio: '16:9',
    }),
  'text-to-3d': (model) => asyncJob({ model: model.id, prompt: 'A low-poly wooden chair' }),
  moderation: (model) => ({
    request: { model: model.id, input: 'I want to hug my cat.' },
    response: {
      id: 'modr-123',
      model: model.id,
      results: [{ flagged: false, categories: { violence: false }, category_scores: { violence: 0.0002 } }],
    },
    stream: null,
  }),
  rerank: (model) => ({
    request: {
      model: model.id,
      query: 'capital of France',
      documents: ['Berlin is in Germany.', 'Paris is in France.'],
    },
    response: {
      model: model.id,
      results: [
        { index: 1, relevance_score: 0.97 },
        { index: 0, relevance_score: 0.03 },
      ],
    },
    stream: null,
  }),
  ocr: (model) => ({
    request: { model: model.id, image_url: 'https://example.com/receipt.png' },
    response: { model: model.id, text: 'TOTAL 12.50' },
    stream: null,
  }),
} satisfies Partial<Record<CapabilityId, Builder>>;

/** Examples for the model's main capability; a bare `{ model }` request where no builder fits. */
export function examplesFor(model: CatalogModel): Examples {
  const main = model.capabilities[0];
  const builder = main ? BUILDERS[main] : undefined;
  return builder ? builder(model) : { request: { model: model.id }, response: {}, stream: null };
}
