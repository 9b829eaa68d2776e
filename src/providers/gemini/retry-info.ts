/**
 * Google says how long to wait after a 429 in the error body, not in a Retry-After header: a
 * `google.rpc.RetryInfo` entry of `error.details` whose `retryDelay` is a protobuf Duration ("7s", "0.5s").
 * Returns milliseconds, or undefined when the body has no such entry.
 */
export function googleRetryDelayMs(body: string): number | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const details = (parsed as { error?: { details?: unknown } } | null)?.error?.details;
  if (!Array.isArray(details)) return undefined;
  for (const detail of details) {
    const d = detail as { '@type'?: unknown; retryDelay?: unknown } | null;
    if (d?.['@type'] !== 'type.googleapis.com/google.rpc.RetryInfo' || typeof d.retryDelay !== 'string')
      continue;
    const seconds = /^(\d+(?:\.\d+)?)s$/.exec(d.retryDelay.trim())?.[1];
    if (seconds !== undefined) return Math.round(Number(seconds) * 1000);
  }
  return undefined;
}
