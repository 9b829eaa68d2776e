/**
 * A field the gateway does not know is a field it cannot price. Forwarded, a provider may bill it (a premium tier,
 * a built-in search, another provider's extension) while the client is charged for tokens alone, so every endpoint
 * that forwards a client's body refuses an unknown top-level field by name, as OpenAI itself answers one.
 */

/** The first top-level field of `body` outside `known`, if any (one is enough to refuse, and a wide body is cheap). */
export function firstUnknownField(body: object, known: ReadonlySet<string>): string | undefined {
  for (const field in body) if (Object.hasOwn(body, field) && !known.has(field)) return field;
  return undefined;
}

export const unrecognizedField = (field: string) =>
  `Unrecognized request argument supplied: ${field} (the gateway forwards only the fields it can price)`;

/** The zod refinement every forwarding schema ends with: the first unknown field, as an issue at its path. */
export function refuseUnknownFields(known: ReadonlySet<string>) {
  return (
    body: object,
    context: { addIssue(issue: { code: 'custom'; path: string[]; message: string }): void },
  ): void => {
    const field = firstUnknownField(body, known);
    if (field !== undefined)
      context.addIssue({ code: 'custom', path: [field], message: unrecognizedField(field) });
  };
}
