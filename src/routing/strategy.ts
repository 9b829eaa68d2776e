import { RequestRefused } from '../contracts/errors.ts';

export const STRATEGIES = ['cost', 'speed', 'quality', 'auto'] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** The `x-routing` header: absent means `auto`; anything else than the four strategies is refused. */
export function parseStrategy(header: string | string[] | undefined): Strategy {
  if (header === undefined) return 'auto';
  const value = (Array.isArray(header) ? header[0] : header)?.trim().toLowerCase() ?? '';
  if ((STRATEGIES as readonly string[]).includes(value)) return value as Strategy;
  throw new RequestRefused('invalid', `'x-routing': one of ${STRATEGIES.join(', ')}`);
}

/** Whether a chat `model` engages the router: `auto`, `auto/text`, or none at all. */
export function routedModel(model: string | undefined): 'auto' | 'auto/text' | undefined {
  if (model === undefined || model === 'auto') return 'auto';
  return model === 'auto/text' ? 'auto/text' : undefined;
}
