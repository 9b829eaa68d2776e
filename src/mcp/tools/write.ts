import { z } from 'zod';
import { CreateEvalRequest } from '../../evals/request.ts';
import { JOB_KINDS } from '../../jobs/kinds.ts';
import { defineTool, type ToolContext } from '../tool.ts';
import { OptionalModel, Tag } from './common.ts';
import { body } from './served.ts';

const post = async (context: ToolContext, path: string, payload: unknown, tag?: string) => {
  const answer = await context.twin({ method: 'POST', path, body: payload, tag });
  return { ...body<Record<string, unknown>>(answer), request_id: answer.requestId };
};

export const createSubAccountTool = defineTool({
  name: 'create_sub_account',
  title: 'Create a sub-account',
  description:
    'Opens a sub-account with a spend cap and returns it with its key, shown once (POST /v1/sub-accounts).',
  access: 'write',
  mainKeyOnly: true,
  input: z.object({
    name: z.string().trim().min(1).max(200),
    spend_cap_cents: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    external_ref: z.string().max(200).optional(),
    rate_limit_rpm: z.number().int().positive().max(1_000_000).optional(),
    default_tag: z.string().trim().min(1).max(128).optional(),
  }),
  run: (args, context) => post(context, '/v1/sub-accounts', args),
});

export const setBudgetTool = defineTool({
  name: 'set_budget',
  title: 'Set a tag budget',
  description: "Sets a cost tag's monthly spending cap (POST /v1/budgets).",
  access: 'write',
  mainKeyOnly: true,
  input: z.object({
    tag: z.string().trim().min(1).max(128),
    cap_cents: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  }),
  run: (args, context) => post(context, '/v1/budgets', args),
});

const KINDS = Object.keys(JOB_KINDS) as [keyof typeof JOB_KINDS, ...(keyof typeof JOB_KINDS)[]];

export const startJobTool = defineTool({
  name: 'start_job',
  title: 'Start a generation job',
  description:
    'Starts an asynchronous video, music or 3D generation, held against the balance until it ends; follow it ' +
    'with get_job (POST /v1/videos/generations, /v1/audio/music or /v1/3d/generations).',
  access: 'write',
  input: z.object({
    kind: z.enum(KINDS),
    prompt: z.string().min(1).max(10_000),
    model: OptionalModel,
    duration: z.number().positive().max(600).optional().describe('Seconds of video or music'),
    aspect_ratio: z
      .string()
      .regex(/^\d{1,2}:\d{1,2}$/, 'looks like 16:9')
      .optional(),
    resolution: z
      .string()
      .regex(/^\d{3,4}p$|^\d{2,5}x\d{2,5}$/, 'looks like 720p or 1280x720')
      .optional(),
    image_url: z.string().min(1).max(8_192).optional(),
    lyrics: z.string().min(1).max(20_000).optional(),
    is_instrumental: z.boolean().optional(),
    tag: Tag,
  }),
  run: ({ kind, tag, ...args }, context) => post(context, JOB_KINDS[kind].path, args, tag),
});

export const startReplayTool = defineTool({
  name: 'start_replay',
  title: 'Replay a request',
  description:
    'Replays a logged request against another model and compares the answers; with shadow, mirrors live ' +
    'traffic (POST /v1/replays). Billed as the calls it makes.',
  access: 'write',
  input: z.object({
    source_request_id: z.string().min(1).max(200),
    target_model: z.string().min(1).max(200),
    shadow: z.boolean().optional(),
    sample_rate: z.number().gt(0).max(1).optional(),
    max_requests: z.number().int().min(1).max(100_000).optional(),
  }),
  run: (args, context) => post(context, '/v1/replays', args),
});

export const startEvalTool = defineTool({
  name: 'start_eval',
  title: 'Start an eval',
  description:
    'Runs a dataset against candidate models and picks a winner by quality, cost or speed; follow it with ' +
    'get_eval (POST /v1/evals). Billed as the calls it makes.',
  access: 'write',
  input: CreateEvalRequest.extend({ tag: Tag }),
  run: ({ tag, ...args }, context) => post(context, '/v1/evals', args, tag),
});
