import { z } from 'zod';
import { defineTool, type ToolContext } from '../tool.ts';
import { OptionalModel, RequiredModel, Tag } from './common.ts';
import { body, served } from './served.ts';

const Texts = (max: number) => z.union([z.string().min(1), z.array(z.string().min(1)).min(1).max(max)]);

/** A tool whose result is the twin's JSON answer, with the model, cost and request id added. */
async function jsonTwin(context: ToolContext, path: string, args: { tag?: string | undefined }) {
  const { tag, ...rest } = args;
  const answer = await context.twin({ method: 'POST', path, tag, body: rest });
  return { ...body<Record<string, unknown>>(answer), ...served(answer) };
}

export const embedTool = defineTool({
  name: 'embed',
  title: 'Embed texts',
  description: 'Returns an embedding vector per text (POST /v1/embeddings).',
  access: 'model',
  input: z.object({
    input: Texts(2048).describe('A text or a list of texts'),
    model: RequiredModel,
    dimensions: z.number().int().positive().optional(),
    tag: Tag,
  }),
  async run({ tag, ...args }, { twin }) {
    const answer = await twin({ method: 'POST', path: '/v1/embeddings', tag, body: args });
    const reply = body<{ data?: { embedding?: unknown }[]; usage?: unknown }>(answer);
    return {
      embeddings: (reply.data ?? []).map((item) => item.embedding),
      usage: reply.usage ?? null,
      ...served(answer),
    };
  },
});

export const translateTool = defineTool({
  name: 'translate',
  title: 'Translate text',
  description: 'Translates a text into another language (POST /v1/translations).',
  access: 'model',
  input: z.object({
    text: z.string().min(1),
    target_lang: z.string().min(2).max(20).describe('A language code such as de, en-US or pt-BR'),
    source_lang: z.string().min(2).max(20).default('auto').describe("The text's language, or 'auto'"),
    model: OptionalModel,
    tag: Tag,
  }),
  run: (args, context) => jsonTwin(context, '/v1/translations', args),
});

export const classifyTool = defineTool({
  name: 'classify',
  title: 'Classify texts',
  description:
    'Puts each text under one of the labels (sentiment when no labels are given) (POST /v1/classifications).',
  access: 'model',
  input: z.object({
    input: Texts(100).describe('A text or a list of texts'),
    labels: z.array(z.string().min(1)).min(2).max(50).optional(),
    model: OptionalModel,
    tag: Tag,
  }),
  run: (args, context) => jsonTwin(context, '/v1/classifications', args),
});

export const moderateTool = defineTool({
  name: 'moderate',
  title: 'Moderate texts',
  description: 'Flags texts that break content policies, by category (POST /v1/moderations).',
  access: 'model',
  input: z.object({
    input: Texts(2048).describe('A text or a list of texts'),
    model: OptionalModel,
    tag: Tag,
  }),
  run: (args, context) => jsonTwin(context, '/v1/moderations', args),
});

export const rerankTool = defineTool({
  name: 'rerank',
  title: 'Rerank documents',
  description: 'Orders documents by relevance to a query, most relevant first (POST /v1/rerank).',
  access: 'model',
  input: z.object({
    query: z.string().min(1),
    documents: z.array(z.string()).min(1).max(1000),
    top_n: z.number().int().positive().optional(),
    model: OptionalModel,
    tag: Tag,
  }),
  run: (args, context) => jsonTwin(context, '/v1/rerank', args),
});

export const ocrTool = defineTool({
  name: 'ocr',
  title: 'Read text from an image or document',
  description: 'Reads the text of an image or PDF at a URL (or a data: URL) as Markdown (POST /v1/ocr).',
  access: 'model',
  input: z.object({
    image_url: z.string().min(1).describe('An http(s) URL or a data: URL of an image or PDF'),
    pages: z
      .array(z.number().int().min(0))
      .min(1)
      .max(1000)
      .optional()
      .describe('0-based pages; all when left out'),
    model: OptionalModel,
    tag: Tag,
  }),
  run: (args, context) => jsonTwin(context, '/v1/ocr', args),
});
