import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';
import { type OpenAiSchema, openAiViolations, streamEventViolations } from '../support/openai-spec/check.ts';
import { startAnthropicUpstream } from '../upstreams/anthropic.ts';
import { toneWav } from '../upstreams/audio-model.ts';
import { startGeminiUpstream } from '../upstreams/gemini.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import { startOpenAiAudioUpstream } from '../upstreams/openai-audio.ts';
import { type OpenAiFront, startOpenAiFront } from '../upstreams/openai-front.ts';
import { startOpenAiImagesUpstream } from '../upstreams/openai-images.ts';
import { startOpenAiModalitiesUpstream } from '../upstreams/openai-modalities.ts';
import { sseJson } from '../upstreams/sse-reader.ts';
import type { Upstream } from '../upstreams/types.ts';

/**
 * Every answer the gateway gives in OpenAI's shape, checked against the schemas of OpenAI's own published API
 * description (test/support/openai-spec, trimmed from github.com/openai/openai-openapi): what a client typed on
 * OpenAI's reference may rely on is there, with OpenAI's types. The gateway's extra fields stay allowed wherever
 * OpenAI's schemas allow more properties (all of these do).
 */
let sims: Upstream[];
let front: OpenAiFront;
let gateway: TestGateway;
let key: string;

/** What the simulators serve, for a gateway that asks OpenAI and Groq which models their keys can use. */
const SERVED = [
  ...['gpt-4o-mini', 'llama-3.3-70b-versatile', 'text-embedding-3-small', 'omni-moderation-latest'],
  ...['dall-e-2', 'gpt-image-1', 'whisper-1', 'gpt-4o-mini-transcribe', 'tts-1'],
];

beforeAll(async () => {
  const [chat, modalities, images, audio, anthropic, gemini] = await Promise.all([
    startOpenAiUpstream(),
    startOpenAiModalitiesUpstream(),
    startOpenAiImagesUpstream(),
    startOpenAiAudioUpstream(),
    startAnthropicUpstream(),
    startGeminiUpstream(),
  ]);
  sims = [chat, modalities, images, audio, anthropic, gemini];
  front = await startOpenAiFront(
    [
      { prefix: '/v1/chat/', url: chat.url },
      // Groq stands for the compatible providers, whose answers leave out OpenAI's null fields.
      { prefix: '/groq/v1/chat/', url: chat.url, as: '/v1/chat/', leanChat: true },
      { prefix: '/v1/embeddings', url: modalities.url },
      { prefix: '/v1/moderations', url: modalities.url },
      { prefix: '/v1/images/', url: images.url },
      { prefix: '/v1/audio/', url: audio.url },
    ],
    SERVED,
  );
  gateway = await startTestGateway(
    {
      OPENAI_API_KEY: 'sk-upstream-openai',
      OPENAI_BASE_URL: `${front.url}/v1`,
      GROQ_API_KEY: 'gsk-upstream',
      GROQ_BASE_URL: `${front.url}/groq/v1`,
      ANTHROPIC_API_KEY: 'sk-upstream-anthropic',
      ANTHROPIC_BASE_URL: anthropic.url,
      GOOGLE_API_KEY: 'upstream-google',
      GOOGLE_BASE_URL: gemini.url,
      GATEWAY_BATCH_APIS: 'none',
      GATEWAY_UPSTREAM_TIMEOUT_MS: '5000',
    },
    { workerIntervalsMs: { batches: 50 } },
  );
  const account = await json(await gateway.admin('/accounts', { name: 'conformance' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'funding' });
  key = account.key;
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([front?.close(), ...(sims ?? []).map((sim) => sim.close())]);
});

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = { authorization: `Bearer ${key}` },
): Promise<{ status: number; body: Json; text: string }> {
  const form = body instanceof FormData;
  const response = await fetch(`${gateway.url}/v1${path}`, {
    method,
    headers: body === undefined || form ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined || form ? (body as FormData | undefined) : JSON.stringify(body),
  });
  const text = await response.text();
  const json = response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined;
  return { status: response.status, body: json, text };
}

/** Asserts the status, then that OpenAI's schema accepts the body; returns the body. */
async function conforming(
  schema: OpenAiSchema,
  answer: Promise<{ status: number; body: Json }>,
  status = 200,
) {
  const { status: got, body } = await answer;
  expect({ got, body }).toMatchObject({ got: status });
  expect(openAiViolations(schema, body)).toEqual([]);
  return body;
}

const weather = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};
const MODELS = [
  'openai/gpt-4o-mini',
  'groq/llama-3.3-70b-versatile',
  'anthropic/claude-sonnet-4-5',
  'google/gemini-2.5-flash',
  'local/echo',
];

describe('chat completions', () => {
  it.each(MODELS)('%s: a text answer and a tool call, whole and streamed', async (model) => {
    for (const extra of [{}, { tools: [weather] }]) {
      const request = {
        model,
        messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
        ...extra,
      };
      const whole = await conforming(
        'CreateChatCompletionResponse',
        call('POST', '/chat/completions', request),
      );
      expect(whole.choices[0].message.refusal).toBeNull();
      const streamed = await call('POST', '/chat/completions', {
        ...request,
        stream: true,
        stream_options: { include_usage: true },
      });
      expect(streamed.status).toBe(200);
      const chunks = sseJson(streamed.text);
      expect(chunks.length).toBeGreaterThan(1);
      for (const chunk of chunks)
        expect(openAiViolations('CreateChatCompletionStreamResponse', chunk)).toEqual([]);
    }
  });
});

describe('embeddings, moderations, models', () => {
  it.each(['openai/text-embedding-3-small', 'local/embed'])('%s embeddings', async (model) => {
    await conforming(
      'CreateEmbeddingResponse',
      call('POST', '/embeddings', { model, input: ['one', 'two'] }),
    );
  });

  it.each(['openai/omni-moderation-latest', 'local/moderation'])('%s moderations', async (model) => {
    await conforming(
      'CreateModerationResponse',
      call('POST', '/moderations', { model, input: 'a kind word' }),
    );
  });

  it('lists models, and describes one', async () => {
    const list = await conforming('ListModelsResponse', call('GET', '/models'));
    expect(list.data.length).toBeGreaterThan(0);
    await conforming('Model', call('GET', `/models/${list.data[0].id}`));
  });
});

describe('images and audio', () => {
  it.each([
    { model: 'openai/dall-e-2', response_format: 'b64_json', size: '256x256' },
    { model: 'openai/dall-e-2', response_format: 'url', size: '256x256' },
    { model: 'openai/gpt-image-1', quality: 'low' },
  ])('image generation: %o', async (options) => {
    await conforming(
      'ImagesResponse',
      call('POST', '/images/generations', { prompt: 'a red kite', ...options }),
    );
  });

  it.each(['openai/whisper-1', 'openai/gpt-4o-mini-transcribe'])('%s transcription (json)', async (model) => {
    const form = new FormData();
    form.append('model', model);
    form.append('file', new Blob([toneWav(1)], { type: 'audio/wav' }), 'tone.wav');
    await conforming('CreateTranscriptionResponseJson', call('POST', '/audio/transcriptions', form));
  });

  it('speech is audio bytes', async () => {
    const response = await fetch(`${gateway.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/tts-1', input: 'Hello there', voice: 'alloy' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^audio\//);
    expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(0);
  });
});

describe('files and batches', () => {
  it('every purpose OpenAI takes is stored; files list, read and delete in OpenAI shape', async () => {
    const upload = (purpose: string, name: string, text: string) => {
      const form = new FormData();
      form.append('purpose', purpose);
      form.append('file', new Blob([text]), name);
      return call('POST', '/files', form);
    };
    const ids: string[] = [];
    for (const purpose of ['user_data', 'vision', 'evals', 'assistants', 'fine-tune', 'batch']) {
      const file = await conforming('OpenAIFile', upload(purpose, `${purpose}.jsonl`, '{"a":1}\n'));
      expect(file.purpose).toBe(purpose);
      ids.push(file.id);
      await conforming('OpenAIFile', call('GET', `/files/${file.id}`));
      expect((await call('GET', `/files/${file.id}/content`)).text).toBe('{"a":1}\n');
    }
    const list = await conforming('ListFilesResponse', call('GET', '/files?purpose=user_data'));
    expect(list.data.map((f: Json) => f.id)).toEqual([ids[0]]);
    await conforming('DeleteFileResponse', call('DELETE', `/files/${ids[0]}`));
  });

  it('a batch, created, listed, cancelled and completed', async () => {
    const line = (id: string) =>
      JSON.stringify({
        custom_id: id,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'local/echo', messages: [{ role: 'user', content: `line ${id}` }], max_tokens: 20 },
      });
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([`${line('a')}\n${line('b')}\n`]), 'in.jsonl');
    const input = (await call('POST', '/files', form)).body;
    const create = { input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' };
    const batch = await conforming('Batch', call('POST', '/batches', create));
    const other = await conforming('Batch', call('POST', '/batches', create));
    await conforming('Batch', call('POST', `/batches/${other.id}/cancel`));
    await conforming('ListBatchesResponse', call('GET', '/batches'));
    const done = await eventually(
      () => call('GET', `/batches/${batch.id}`),
      (answer) => answer.body.status === 'completed',
      20_000,
    );
    expect(done.body.status).toBe('completed');
    expect(openAiViolations('Batch', done.body)).toEqual([]);
  });
});

describe('responses', () => {
  it.each(['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5'])(
    '%s: a Response, its stream events and the stored Response',
    async (model) => {
      const tool = { type: 'function', name: 'get_weather', parameters: weather.function.parameters };
      for (const extra of [{}, { tools: [tool] }]) {
        const request = { model, input: 'What is the weather in Paris?', ...extra };
        const response = await conforming('Response', call('POST', '/responses', request));
        expect(response.usage.input_tokens_details).toMatchObject({ cache_write_tokens: 0 });
        const stored = await eventually(
          () => call('GET', `/responses/${response.id}`),
          (answer) => answer.status === 200,
          5000,
        );
        expect(openAiViolations('Response', stored.body)).toEqual([]);
        const streamed = await call('POST', '/responses', { ...request, stream: true });
        const events = sseJson(streamed.text);
        expect(events.at(-1)?.type).toBe('response.completed');
        for (const event of events) expect(streamEventViolations(event)).toEqual([]);
      }
    },
  );
});

describe('errors', () => {
  const wrongKey = { authorization: `Bearer sk-gw-${'A'.repeat(43)}` };
  it.each([
    ['a missing key', () => call('GET', '/files', undefined, {}), 401],
    ['a wrong key', () => call('GET', '/files', undefined, wrongKey), 401],
    ['an unknown file', () => call('GET', '/files/file-000000000000000000000000'), 404],
    ['an unknown batch', () => call('GET', '/batches/batch_000000000000000000000000'), 404],
    ['an unknown model', () => call('POST', '/embeddings', { model: 'openai/nope', input: 'x' }), 404],
    [
      'a field out of range',
      () => call('POST', '/chat/completions', { model: 'local/echo', max_tokens: -1 }),
      400,
    ],
    ['an unknown path', () => call('GET', '/nowhere'), 404],
  ])('%s', async (_, answer, status) => {
    await conforming('ErrorResponse', answer(), status);
  });

  it('malformed JSON is a 400 with param null', async () => {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{"model": ',
    });
    expect(response.status).toBe(400);
    const body = await json(response);
    expect(openAiViolations('ErrorResponse', body)).toEqual([]);
    expect(body.error).toMatchObject({ param: null, code: 400 });
  });
});
