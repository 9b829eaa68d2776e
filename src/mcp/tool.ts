import type { ToolAnnotations } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { SignedUrl } from '../media/signed-urls.ts';
import type { Twin } from './twin.ts';

/** What a tool's run may use: its HTTP twin, and a place for bytes an agent should fetch by URL. */
export interface ToolContext {
  twin: Twin;
  /** Stores bytes and signs a URL for them on the media host (the `/media` route unless configured). */
  publish(key: string, bytes: Buffer): Promise<SignedUrl>;
}

/**
 * Who sees a tool: `model` and `read` tools every key; `write` tools only keys of an account whose operator
 * turned them on (`mcp_write_tools`), since an agent spending money or changing limits should be a choice.
 */
export type ToolAccess = 'model' | 'read' | 'write';

export interface ToolDef {
  name: string;
  title: string;
  description: string;
  /** JSON Schema of the arguments, as `tools/list` shows it. */
  inputSchema: Record<string, unknown>;
  access: ToolAccess;
  /** A management tool a sub-account's key may not call (its twin answers 403): not listed for those keys. */
  mainKeyOnly: boolean;
  annotations: ToolAnnotations;
  /** Checks the arguments, then runs; the result is the tool's structured content. */
  call(args: unknown, context: ToolContext): Promise<Record<string, unknown>>;
}

/** Arguments that do not fit the tool's schema: a tool error naming the fields. */
export class ToolArgumentsError extends Error {
  override readonly name = 'ToolArgumentsError';
}

const ANNOTATIONS: Record<ToolAccess, ToolAnnotations> = {
  model: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  read: { readOnlyHint: true, openWorldHint: false },
  write: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
};

export function defineTool<S extends z.ZodType<Record<string, unknown>>>(spec: {
  name: string;
  title: string;
  description: string;
  input: S;
  access: ToolAccess;
  mainKeyOnly?: boolean;
  run(args: z.output<S>, context: ToolContext): Promise<Record<string, unknown>>;
}): ToolDef {
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    inputSchema: z.toJSONSchema(spec.input, { io: 'input' }) as Record<string, unknown>,
    access: spec.access,
    mainKeyOnly: spec.mainKeyOnly ?? false,
    annotations: { title: spec.title, ...ANNOTATIONS[spec.access] },
    async call(args, context) {
      const parsed = spec.input.safeParse(args ?? {});
      if (!parsed.success) throw new ToolArgumentsError(describeIssues(parsed.error.issues));
      return spec.run(parsed.data, context);
    },
  };
}

/** `Invalid arguments: 'messages.0.role': ...; 'prompt': required`, as the API's 400s name the field. */
export function describeIssues(issues: z.core.$ZodIssue[]): string {
  const parts = issues.slice(0, 5).map((issue) => {
    const field = issue.path.map(String).join('.') || 'arguments';
    const message = issue.code === 'invalid_type' && issue.input === undefined ? 'required' : issue.message;
    return `'${field}': ${message}`;
  });
  return `Invalid arguments: ${parts.join('; ')}`;
}

/** The cost the twin reported (`x-cost-cents`), a number of cents; null when it reported none. */
export function costCents(headers: Record<string, string | undefined>): number | null {
  const value = headers['x-cost-cents'];
  return value === undefined ? null : Number(value);
}
