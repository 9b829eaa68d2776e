import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dollarsPerMillion } from '../../src/contracts/money.ts';
import { type Json, json } from '../support/json.ts';
import { words } from '../upstreams/model.ts';
import { centsFor, freshTag } from './support.ts';
import { expectFieldError, startTextTaskWorld, type TextTaskWorld } from './text-tasks-support.ts';

/** DeepL's $25 per million characters, as a price line's nano-dollars per million. */
const PER_MILLION_CHARACTERS = dollarsPerMillion('25');
const GPT_4O_MINI = { input: dollarsPerMillion('0.15'), output: dollarsPerMillion('0.6') };

let world: TextTaskWorld;
beforeAll(async () => {
  world = await startTextTaskWorld();
});
afterAll(async () => {
  await world?.close();
});

/** The tokens the OpenAI simulator reports for the conversation it was sent last (model.ts's rule). */
function simulatedPromptTokens(): number {
  const body = world.sims.openai.requests.at(-1)?.body as { messages: { content: string }[] };
  return body.messages.reduce((sum, m) => sum + words(m.content) + 3, 0);
}

function chatCents(usage: Json): number {
  return centsFor([
    { item: 'input_tokens', quantity: usage.prompt_tokens, unitPriceNanosPerMillion: GPT_4O_MINI.input },
    {
      item: 'output_tokens',
      quantity: usage.completion_tokens,
      unitPriceNanosPerMillion: GPT_4O_MINI.output,
    },
  ]);
}

/** A chat completion as OpenAI sends it, answering `content`. */
const completion = (content: string) => ({
  id: 'chatcmpl-scripted',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 40, completion_tokens: 6, total_tokens: 46 },
});

describe('POST /v1/translations', () => {
  it('translates with DeepL by default, billed per source character at $25 per million', async () => {
    const tag = freshTag('translate');
    const text = 'Hello wörld';
    const response = await world.post(
      '/translations',
      { text, source_lang: 'en-US', target_lang: 'de' },
      { 'x-gw-tag': tag },
    );
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({
      object: 'translation',
      model: 'deepl/translate',
      text: '[DE] Hello wörld',
      source_lang: 'EN',
      target_lang: 'de',
      usage: { characters: 11 },
    });
    const sent = world.sims.deepl.requests.at(-1);
    expect(sent?.path).toBe('/v2/translate');
    expect(sent?.headers.authorization).toBe('DeepL-Auth-Key upstream-deepl');
    expect(sent?.body).toEqual({
      text: [text],
      target_lang: 'DE',
      source_lang: 'EN',
      show_billed_characters: true,
    });
    expect(response.headers.get('x-model')).toBe('deepl/translate');
    expect(response.headers.get('x-provider')).toBe('deepl');
    const cents = centsFor([
      { item: 'characters', quantity: 11, unitPriceNanosPerMillion: PER_MILLION_CHARACTERS },
    ]);
    expect(Number(response.headers.get('x-cost-cents'))).toBe(cents);
    const row = await world.usageOf(tag);
    expect(row).toMatchObject({ requests: 1, units: 11 });
    expect(row.cost_cents).toBeCloseTo(cents, 7);
  });

  it('lets DeepL detect the source language for source_lang auto, and answers the detected one', async () => {
    const response = await world.post('/translations', {
      text: 'Bonjour',
      source_lang: 'auto',
      target_lang: 'en-GB',
    });
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({
      text: '[EN-GB] Bonjour',
      source_lang: 'EN',
      target_lang: 'en-GB',
    });
    expect(world.sims.deepl.requests.at(-1)?.body).not.toHaveProperty('source_lang');
  });

  it('translates with a chat model named as model, through the chat path, billed by the token', async () => {
    const tag = freshTag('translate-llm');
    const response = await world.post(
      '/translations',
      { model: 'openai/gpt-4o-mini', text: 'Good morning', source_lang: 'en', target_lang: 'de' },
      { 'x-gw-tag': tag },
    );
    expect(response.status).toBe(200);
    const body = await json(response);
    const prompt = simulatedPromptTokens();
    expect(body).toEqual({
      object: 'translation',
      model: 'openai/gpt-4o-mini',
      text: 'echo: Good morning',
      source_lang: 'en',
      target_lang: 'de',
      usage: { prompt_tokens: prompt, completion_tokens: 3, total_tokens: prompt + 3 },
    });
    const sent = world.sims.openai.requests.at(-1)?.body as Json;
    expect(sent.model).toBe('gpt-4o-mini');
    expect(sent.messages[0].content).toContain('from English (en) into German (de)');
    expect(sent.messages[1]).toEqual({ role: 'user', content: 'Good morning' });
    expect(response.headers.get('x-model')).toBe('openai/gpt-4o-mini');
    const cents = chatCents(body.usage);
    expect(Number(response.headers.get('x-cost-cents'))).toBe(cents);
    const row = await world.usageOf(tag);
    expect(row).toMatchObject({ requests: 1, units: prompt + 3 });
    expect(row.cost_cents).toBeCloseTo(cents, 7);
  });

  it.each([
    [456, 'quota'],
    [403, 'key'],
    [500, 'Internal'],
  ])('turns DeepL %i into 502 provider_error and releases the hold', async (status, words) => {
    world.sims.deepl.script({ kind: 'error', status });
    const response = await world.post('/translations', { text: 'Hi', source_lang: 'en', target_lang: 'de' });
    expect(response.status).toBe(502);
    const error = (await json(response)).error;
    expect(error).toMatchObject({ type: 'provider_error', code: 502 });
    expect(error.message).toContain(words);
    expect(await world.holdsOf(response.headers.get('x-request-id'))).toEqual(['failed']);
  });

  it.each([
    ['a missing text', { source_lang: 'en', target_lang: 'de' }, "'text'"],
    ['an empty text', { text: '', source_lang: 'en', target_lang: 'de' }, "'text'"],
    ['a missing target_lang', { text: 'Hi', source_lang: 'en' }, "'target_lang'"],
    ['a target_lang of the wrong type', { text: 'Hi', source_lang: 'en', target_lang: 7 }, "'target_lang'"],
    [
      'a source_lang that is no language code',
      { text: 'Hi', source_lang: 'English!', target_lang: 'de' },
      "'source_lang'",
    ],
    ['a model of the wrong type', { model: 3, text: 'Hi', source_lang: 'en', target_lang: 'de' }, "'model'"],
  ])('refuses %s with 400 naming the field', async (_, body, field) => {
    await expectFieldError(await world.post('/translations', body), field);
  });

  it('refuses a model that cannot translate, naming its own endpoint', async () => {
    const message = await expectFieldError(
      await world.post('/translations', {
        model: 'openai/text-embedding-3-small',
        text: 'Hi',
        source_lang: 'en',
        target_lang: 'de',
      }),
      "'model'",
    );
    expect(message).toContain('POST /v1/embeddings');
    const unknown = await world.post('/translations', {
      model: 'deepl/nope',
      text: 'Hi',
      source_lang: 'en',
      target_lang: 'de',
    });
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).error).toMatchObject({ type: 'model_not_found', code: 404 });
  });
});

describe('POST /v1/translations without a DeepL key', () => {
  it('falls back to the first reachable chat model by default', async () => {
    const bare = await startTextTaskWorld({ deepl: false });
    try {
      const response = await bare.post('/translations', { text: 'Hi', source_lang: 'en', target_lang: 'fr' });
      expect(response.status).toBe(200);
      expect(await json(response)).toMatchObject({ model: 'openai/gpt-4o-mini', text: 'echo: Hi' });
      const refused = await bare.post('/translations', {
        model: 'deepl/translate',
        text: 'Hi',
        source_lang: 'en',
        target_lang: 'fr',
      });
      expect(await expectFieldError(refused, "'model'")).toContain('DEEPL_API_KEY');
    } finally {
      await bare.close();
    }
  });
});

describe('POST /v1/classifications: labels per input', () => {
  it('labels each input through a chat model with a JSON schema, sentiment labels by default', async () => {
    const tag = freshTag('classify');
    const response = await world.post(
      '/classifications',
      { input: ['I love it', 'It broke'] },
      { 'x-gw-tag': tag },
    );
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).toMatchObject({
      object: 'list',
      model: 'openai/gpt-4o-mini',
      data: [
        { index: 0, label: 'positive', score: 0.5 },
        { index: 1, label: 'positive', score: 0.5 },
      ],
    });
    const sent = world.sims.openai.requests.at(-1)?.body as Json;
    expect(sent.response_format.type).toBe('json_schema');
    expect(sent.response_format.json_schema.strict).toBe(true);
    const schema = sent.response_format.json_schema.schema;
    expect(schema.required).toEqual(['input_0', 'input_1']);
    expect(schema.properties.input_1.properties.label.enum).toEqual(['positive', 'negative', 'neutral']);
    expect(JSON.parse(sent.messages[1].content)).toEqual({ input_0: 'I love it', input_1: 'It broke' });
    const cents = chatCents(body.usage);
    expect(Number(response.headers.get('x-cost-cents'))).toBe(cents);
    const row = await world.usageOf(tag);
    expect(row.cost_cents).toBeCloseTo(cents, 7);
  });

  it('takes a single input and the client own labels', async () => {
    const response = await world.post('/classifications', {
      model: 'openai/gpt-4o-mini',
      input: 'The match ended 2-1',
      labels: ['sports', 'politics'],
    });
    expect(response.status).toBe(200);
    expect((await json(response)).data).toEqual([{ index: 0, label: 'sports', score: 0.5 }]);
  });

  it('answers 502 for a label outside the set, keeping the charge for the tokens used', async () => {
    world.sims.openai.script({
      kind: 'error',
      status: 200,
      body: completion(JSON.stringify({ input_0: { label: 'angry', score: 0.9 } })),
    });
    const tag = freshTag('classify-bad');
    const response = await world.post('/classifications', { input: 'grr' }, { 'x-gw-tag': tag });
    expect(response.status).toBe(502);
    const error = (await json(response)).error;
    expect(error).toMatchObject({ type: 'provider_error', code: 502 });
    expect(error.message).toContain('"angry", not one of the labels');
    const cents = centsFor([
      { item: 'input_tokens', quantity: 40, unitPriceNanosPerMillion: GPT_4O_MINI.input },
      { item: 'output_tokens', quantity: 6, unitPriceNanosPerMillion: GPT_4O_MINI.output },
    ]);
    expect(Number(response.headers.get('x-cost-cents'))).toBe(cents);
    expect(await world.holdsOf(response.headers.get('x-request-id'))).toEqual(['settled']);
    expect((await world.usageOf(tag)).cost_cents).toBeCloseTo(cents, 7);
  });

  it('releases the hold when the chat provider fails', async () => {
    world.sims.openai.script({ kind: 'error', status: 500 });
    const response = await world.post('/classifications', { input: 'fine' });
    expect(response.status).toBe(502);
    expect(await world.holdsOf(response.headers.get('x-request-id'))).toEqual(['failed']);
  });

  it.each([
    ['no input and no questions', {}, "'input'"],
    ['an input of the wrong type', { input: 5 }, "'input'"],
    ['one label', { input: 'x', labels: ['only'] }, "'labels'"],
    ['a repeated label', { input: 'x', labels: ['a', 'a'] }, "'labels'"],
  ])('refuses %s with 400 naming the field', async (_, body, field) => {
    await expectFieldError(await world.post('/classifications', body), field);
  });

  it('refuses a model that is not a chat model, naming its endpoint', async () => {
    const message = await expectFieldError(
      await world.post('/classifications', { model: 'deepl/translate', input: 'x' }),
      "'model'",
    );
    expect(message).toContain('POST /v1/translations');
  });
});

describe('POST /v1/classifications: evaluating a state against typed questions', () => {
  const questions = [
    { id: 'paid', question: 'Has the order been paid?', type: 'boolean' },
    { id: 'items', question: 'How many items are in the order?', type: 'number' },
    { id: 'stage', question: 'Which stage is the order in?', type: 'enum', options: ['cart', 'shipped'] },
    { id: 'summary', question: 'Summarize the order.', type: 'text' },
  ];
  const state = { order: { paid: true, items: 2, status: 'in the cart' } };

  it('answers each question in its type, from a JSON schema built from the questions', async () => {
    const tag = freshTag('evaluate');
    const response = await world.post('/classifications', { state, questions }, { 'x-gw-tag': tag });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).toMatchObject({
      object: 'evaluation',
      model: 'openai/gpt-4o-mini',
      answers: [
        { id: 'paid', type: 'boolean', answer: true },
        { id: 'items', type: 'number', answer: 0.5 },
        { id: 'stage', type: 'enum', answer: 'cart' },
        { id: 'summary', type: 'text', answer: 'sim' },
      ],
    });
    const sent: Json = world.sims.openai.requests.at(-1)?.body;
    const schema = sent.response_format.json_schema.schema;
    expect(schema).toMatchObject({
      type: 'object',
      required: ['paid', 'items', 'stage', 'summary'],
      additionalProperties: false,
      properties: {
        paid: { type: 'boolean' },
        items: { type: 'number' },
        stage: { type: 'string', enum: ['cart', 'shipped'] },
        summary: { type: 'string' },
      },
    });
    const cents = chatCents(body.usage);
    expect((await world.usageOf(tag)).cost_cents).toBeCloseTo(cents, 7);
  });

  it.each([
    [
      'an enum answer outside its options',
      { paid: true, items: 2, stage: 'lost', summary: 's' },
      'not one of its options',
    ],
    [
      'a number answered as text',
      { paid: true, items: 'two', stage: 'cart', summary: 's' },
      '\'items\' is "two"',
    ],
    ['a missing answer', { paid: true, items: 2, stage: 'cart' }, "'summary'"],
  ])('answers 502 for %s and keeps the charge', async (_, answer, says) => {
    world.sims.openai.script({ kind: 'error', status: 200, body: completion(JSON.stringify(answer)) });
    const response = await world.post('/classifications', { state, questions });
    expect(response.status).toBe(502);
    const error = (await json(response)).error;
    expect(error).toMatchObject({ type: 'provider_error', code: 502 });
    expect(error.message).toContain(says);
    expect(await world.holdsOf(response.headers.get('x-request-id'))).toEqual(['settled']);
  });

  it('answers 502 for an answer that is not JSON', async () => {
    world.sims.openai.script({ kind: 'error', status: 200, body: completion('I think it was paid.') });
    const response = await world.post('/classifications', { state: 'a paid order', questions });
    expect(response.status).toBe(502);
    expect((await json(response)).error.message).toContain('not a JSON object');
  });

  it.each([
    ['questions without a state', { questions }, "'state'"],
    ['a state without questions', { state }, "'questions'"],
    [
      'an enum question without options',
      { state, questions: [{ id: 'a', question: 'q', type: 'enum' }] },
      "'questions.0.options'",
    ],
    [
      'options on a boolean question',
      { state, questions: [{ id: 'a', question: 'q', type: 'boolean', options: ['x', 'y'] }] },
      "'questions.0.options'",
    ],
    [
      'an unknown question type',
      { state, questions: [{ id: 'a', question: 'q', type: 'date' }] },
      "'questions.0.type'",
    ],
    ['a repeated id', { state, questions: [questions[0], questions[0]] }, "'questions'"],
    ['input beside questions', { input: 'x', state, questions }, "'input'"],
  ])('refuses %s with 400 naming the field', async (_, body, field) => {
    await expectFieldError(await world.post('/classifications', body), field);
  });
});
