import { createHmac, timingSafeEqual } from 'node:crypto';

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, keyed with the secret as its UTF-8 text. */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${hmacHex(secret, `${unixSeconds}.${body}`)}`;
}

function hmacHex(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(payload).digest('hex');
}

export type SignatureVerdict = 'valid' | 'invalid' | 'stale';

/**
 * What a receiver does (docs/webhooks.md shows the same in Python): recompute the digest over the raw body and
 * compare in constant time; refuse a timestamp older than the tolerance (a replayed request).
 */
export function verifySignature(
  secret: string,
  rawBody: string,
  header: string | undefined,
  nowSeconds: number,
  toleranceSeconds = 300,
): SignatureVerdict {
  if (!header) return 'invalid';
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  const candidates = parts.filter(([k]) => k === 'v1').map(([, v]) => v ?? '');
  if (!Number.isSafeInteger(t) || candidates.length === 0) return 'invalid';
  const expected = Buffer.from(hmacHex(secret, `${t}.${rawBody}`), 'hex');
  const matches = candidates.some((v) => {
    const given = Buffer.from(v, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) return 'invalid';
  return Math.abs(nowSeconds - t) > toleranceSeconds ? 'stale' : 'valid';
}
