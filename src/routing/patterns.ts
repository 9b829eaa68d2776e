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

/** Which models may be routed to: the allowed ones (all when the list is absent) that are not excluded. */
export interface RoutingRestriction {
  allowed: readonly string[] | null;
  excluded: readonly string[];
}

export function restrictionFilter(restriction: RoutingRestriction | undefined): (id: string) => boolean {
  if (!restriction) return () => true;
  const allowed = restriction.allowed === null ? () => true : matcher(restriction.allowed);
  const excluded = matcher(restriction.excluded);
  return (id) => allowed(id) && !excluded(id);
}
