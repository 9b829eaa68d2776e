import { CACHE_MODES, type CacheMode } from '../cache/mode.ts';
import { UsageError } from './usage.ts';

export type Flags = Record<string, string | undefined>;

export function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

/** `--month YYYY-MM`, checked. */
export function monthFlag(flags: Flags): string {
  const month = required(flags, 'month');
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) throw new UsageError('--month must read YYYY-MM');
  return month;
}

/** `--request-bodies keep|drop|default` (default: back to the gateway's setting). */
export function requestBodiesFlag(flags: Flags): 'keep' | 'drop' | null | undefined {
  const raw = flags['request-bodies'];
  if (raw === undefined) return undefined;
  if (raw === 'default') return null;
  if (raw !== 'keep' && raw !== 'drop')
    throw new UsageError('--request-bodies must be keep, drop or default');
  return raw;
}

/** `--cache-default auto|force|semantic|skip`. */
export function cacheDefaultFlag(flags: Flags): CacheMode | undefined {
  const raw = flags['cache-default'];
  if (raw === undefined) return undefined;
  if (!(CACHE_MODES as readonly string[]).includes(raw))
    throw new UsageError(`--cache-default must be ${CACHE_MODES.join(', ')}`);
  return raw as CacheMode;
}

/** `--mcp-write-tools on|off`, `--byok-sub-accounts on|off`, `--byok-fallback on|off`. */
export function onOffFlag(flags: Flags, name = 'mcp-write-tools'): boolean | undefined {
  const raw = flags[name];
  if (raw === undefined) return undefined;
  if (raw !== 'on' && raw !== 'off') throw new UsageError(`--${name} must be on or off`);
  return raw === 'on';
}

export function optionalInteger(flags: Flags, name: string, min: number): number | undefined {
  const raw = flags[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min)
    throw new UsageError(`--${name} must be an integer of at least ${min}`);
  return value;
}
