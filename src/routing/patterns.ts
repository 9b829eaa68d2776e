/** Model patterns of the operator's and accounts' routing lists: `*` matches any run of characters. */
export function matcher(patterns: readonly string[]): (id: string) => boolean {
  if (patterns.length === 0) return () => false;
  const source = patterns
    .map((p) =>
      p
        .split('*')
        .map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, '\\$&'))
        .join('.*'),
    )
    .join('|');
  const pattern = new RegExp(`^(?:${source})$`);
  return (id) => pattern.test(id);
}

/**
 * Which models may be routed to: the allowed ones (all when the list is absent or empty) that are not excluded.
 * An empty `allowed` is no allow-list rather than an allow-list of nothing, which would leave nothing to route to.
 */
export interface RoutingRestriction {
  allowed: readonly string[] | null;
  excluded: readonly string[];
}

export function restrictionFilter(restriction: RoutingRestriction | undefined): (id: string) => boolean {
  if (!restriction) return () => true;
  const allowed =
    restriction.allowed === null || restriction.allowed.length === 0
      ? () => true
      : matcher(restriction.allowed);
  const excluded = matcher(restriction.excluded);
  return (id) => allowed(id) && !excluded(id);
}

/** An account's lists as recorded: an empty `allowed` is none, and none of either is no restriction (null). */
export function accountRestriction(
  allowed: string[] | null,
  excluded: string[],
): { allowed: string[] | null; excluded: string[] } | null {
  const allowList = allowed && allowed.length > 0 ? allowed : null;
  return allowList === null && excluded.length === 0 ? null : { allowed: allowList, excluded };
}
