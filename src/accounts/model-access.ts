import { RequestRefused } from '../contracts/errors.ts';
import type { KeyHolder, LiveSubAccount } from './live-state.ts';
import { matchesModel } from './reseller-settings.ts';

/**
 * The model patterns a key may use: its sub-account's `allowed_models`, or null (every model) for a main key and
 * a sub-account without a list. Read from the live state per request, so a change applies from the next request
 * on every instance.
 */
export function allowedModelsOf(
  live: { subAccount(subAccountId: string): LiveSubAccount | undefined },
  auth: Pick<KeyHolder, 'subAccountId'>,
): readonly string[] | null {
  if (auth.subAccountId === null) return null;
  return live.subAccount(auth.subAccountId)?.allowedModels ?? null;
}

/** Whether a catalog id (`provider/model`) is one the patterns allow; null allows every model. */
export function allowsModel(allowed: readonly string[] | null, modelId: string): boolean {
  return allowed === null || allowed.some((pattern) => matchesModel(pattern, modelId));
}

/** Patterns a refusal names, at most. */
const NAMED = 10;

/** What the key may use, as a refusal says it. */
export function allowedText(allowed: readonly string[]): string {
  if (allowed.length === 0) return 'this key may use no model (its sub-account allows none)';
  const shown = allowed.slice(0, NAMED).join(', ');
  const more = allowed.length > NAMED ? ` and ${allowed.length - NAMED} more` : '';
  return `this key may use ${shown}${more} (GET /v1/models lists them)`;
}

/**
 * Refuses (403 `permission_error`, before anything is held) a model the key may not use. `named` is what the
 * client called it when that differs from the catalog id (`gpt-4o-mini` for `openai/gpt-4o-mini`); `field` is the
 * request's field that named it, which the message starts with as every refusal of a field does.
 */
export function permitModel(
  allowed: readonly string[] | null,
  modelId: string,
  options: { named?: string; field?: string } = {},
): void {
  if (allowsModel(allowed, modelId)) return;
  const { named, field = 'model' } = options;
  const shown =
    named === undefined || named.toLowerCase() === modelId.toLowerCase() ? modelId : `${named} (${modelId})`;
  throw new RequestRefused(
    'forbidden',
    `'${field}': ${shown} is not allowed for this key; ${allowedText(allowed ?? [])}`,
  );
}
