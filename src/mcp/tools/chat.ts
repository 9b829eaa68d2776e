import { z } from 'zod';
import { defineTool } from '../tool.ts';
import { Tag } from './common.ts';
import { body, served } from './served.ts';

const Message = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant']),
  content: z.string(),
});

const ChatArgs = z
  .object({
    model: z
      .string()
      .min(1)
      .max(200)
      .default('auto')
      .describe("A model id from list_models, or 'auto' to let the gateway choose"),
    messages: z
      .array(Message)
      .min(1)
      .max(1000)
      .optional()
      .describe('The conversation; or give prompt instead'),
    prompt: z.string().min(1).optional().describe('A single user message; or give messages instead'),
    system: z.string().min(1).optional().describe('A system message put before the others'),
    max_tokens: z.number().int().positive().optional(),
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().gt(0).max(1).optional(),
    stop: z.union([z.string(), z.array(z.string()).min(1).max(4)]).optional(),
    reasoning_effort: z.enum(['none', 'low', 'medium', 'high']).optional(),
    response_format: z.enum(['text', 'json_object']).optional(),
    tag: Tag,
  })
  .superRefine((args, ctx) => {
    if ((args.messages === undefined) === (args.prompt === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [args.messages === undefined ? 'prompt' : 'messages'],
        message: "give either 'messages' or 'prompt', not both",
      });
    }
  });

interface ChatCompletion {
  model?: string;
  choices?: { message?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: Record<string, unknown>;
}

/** `POST /v1/chat/completions`, not streamed: one answer with its model and cost. */
export const chatTool = defineTool({
  name: 'chat',
  title: 'Chat completion',
  description:
    'Asks a chat model of the gateway and returns its text, the model that answered and what it cost ' +
    '(POST /v1/chat/completions; billed and logged as that request).',
  access: 'model',
  input: ChatArgs,
  async run(args, { twin }) {
    const { model, messages, prompt, system, tag, response_format, ...options } = args;
    const conversation = [
      ...(system === undefined ? [] : [{ role: 'system' as const, content: system }]),
      ...(messages ?? [{ role: 'user' as const, content: prompt ?? '' }]),
    ];
    const answer = await twin({
      method: 'POST',
      path: '/v1/chat/completions',
      tag,
      body: {
        model,
        messages: conversation,
        ...options,
        ...(response_format && { response_format: { type: response_format } }),
      },
    });
    const completion = body<ChatCompletion>(answer);
    const choice = completion.choices?.[0];
    const meta = served(answer);
    return {
      text: choice?.message?.content ?? '',
      ...meta,
      model: meta.model ?? completion.model ?? null,
      provider: answer.headers['x-provider'] ?? null,
      finish_reason: choice?.finish_reason ?? null,
      usage: completion.usage ?? null,
    };
  },
});
