import { BODY_SHAPE_LIMITS } from '../../src/contracts/json-shape.ts';

/**
 * Bodies whose cost is in their shape, not their length: sent by a sub-account with a $0 cap, whose every request
 * the hold refuses, so nothing but the passes before the hold is measured. Past the limits of
 * src/contracts/json-shape.ts (a 500,000-key object once held the loop for seconds before its 402), and at them.
 */
export interface ShapedBody {
  path: string;
  body: Buffer;
  label: string;
  /** Past a limit: refused by the shape scan, before anything parses it. */
  pastLimit: boolean;
}

const members = (count: number, prefix = 'k') =>
  Array.from({ length: count }, (_, i) => `"${prefix}${i}":0`).join(',');
const zeros = (count: number) => `[${'0,'.repeat(count - 1)}0]`;
const EMBED = '"model":"local/embed","input":"hello"';
const CHAT = '"model":"local/echo","max_tokens":16,"messages":[{"role":"user","content":"hello"}]';

export function largeShapes(): ShapedBody[] {
  const shaped = (path: string, label: string, json: string, pastLimit: boolean): ShapedBody => ({
    path,
    label: `${path} ${label}`,
    body: Buffer.from(json),
    pastLimit,
  });
  const { keys, elements } = BODY_SHAPE_LIMITS;
  return [
    shaped('/v1/embeddings', '500k-key object', `{${EMBED},${members(500_000)}}`, true),
    shaped('/v1/embeddings', '1M-element array', `{${EMBED},"extra":${zeros(1_000_000)}}`, true),
    shaped('/v1/chat/completions', '100k-key metadata', `{${CHAT},"metadata":{${members(100_000)}}}`, true),
    shaped(
      '/v1/chat/completions',
      `3 arrays of ${elements}`,
      `{${CHAT},${Array.from({ length: 3 }, (_, i) => `"a${i}":${zeros(elements)}`).join(',')}}`,
      true,
    ),
    shaped('/v1/embeddings', `${keys}-key object (at the limit)`, `{${EMBED},${members(keys - 2)}}`, false),
    shaped(
      '/v1/embeddings',
      `${elements}-element array (at the limit)`,
      `{"model":"local/embed","input":${zeros(elements)}}`,
      false,
    ),
  ];
}
