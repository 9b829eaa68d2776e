export interface ProviderEnv {
  /** `<PROVIDER>_API_KEY`, PROVIDER being the provider id upper-cased with other characters as `_`. */
  keyVar: string;
  /** Every variable that may hold the key, in order of preference (keyVar first). */
  keyVars: string[];
  baseUrlVar: string;
}

/** Names the SDKs of a provider read besides ours (Google's own SDKs read GEMINI_API_KEY). */
const EXTRA_KEY_VARS: Readonly<Record<string, readonly string[]>> = { google: ['GEMINI_API_KEY'] };

export function providerEnv(provider: string): ProviderEnv {
  const prefix = provider.toUpperCase().replace(/[^A-Z0-9]/g, '_');
  const keyVar = `${prefix}_API_KEY`;
  return {
    keyVar,
    keyVars: [keyVar, ...((Object.hasOwn(EXTRA_KEY_VARS, provider) && EXTRA_KEY_VARS[provider]) || [])],
    baseUrlVar: `${prefix}_BASE_URL`,
  };
}

/** The provider's key from the environment; an empty variable counts as unset. */
export function providerKey(provider: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const name of providerEnv(provider).keyVars) {
    const value = env[name];
    if (value) return value;
  }
  return undefined;
}
