import type { TwinAnswer } from '../twin.ts';

/**
 * The twin's JSON body as the API documents it. Its shape is the route's own (tested there); a tool reads the few
 * fields it passes on.
 */
export function body<T>(answer: TwinAnswer): T {
  return (answer.json ?? {}) as T;
}

/** What every model tool adds to its result: the model that served, what it cost, and its request log id. */
export function served(answer: TwinAnswer): {
  model: string | null;
  cost_cents: number | null;
  request_id: string;
} {
  const cost = answer.headers['x-cost-cents'];
  return {
    model: answer.headers['x-model'] ?? null,
    cost_cents: cost === undefined ? null : Number(cost),
    request_id: answer.requestId,
  };
}
