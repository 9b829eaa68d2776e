export type Path = (string | number)[];

export interface Breakpoint {
  /** Where the breakpoint's `cache_control` is, as a schema issue names it. */
  path: Path;
  cacheControl: { ttl?: unknown };
}

const cacheControlOf = (holder: unknown) =>
  (holder as { cache_control?: { ttl?: unknown } | null } | null)?.cache_control ?? undefined;

/**
 * Every cache breakpoint of a Messages request, where Anthropic takes one: the request itself (automatic
 * caching, placed on the last cacheable block), system blocks, tools, message blocks and the blocks inside a
 * block (a tool result's). Anthropic writes its prompt cache only where asked: without a breakpoint, nothing is.
 */
export function* cacheBreakpoints(body: { system?: unknown; messages?: unknown; tools?: unknown }) {
  const top = cacheControlOf(body);
  if (top) yield { path: ['cache_control'], cacheControl: top } satisfies Breakpoint;
  const blocks: [Path, unknown][] = [];
  const add = (path: Path, list: unknown) => {
    if (Array.isArray(list)) for (const [i, block] of list.entries()) blocks.push([[...path, i], block]);
  };
  add(['system'], body.system);
  add(['tools'], body.tools);
  if (Array.isArray(body.messages))
    for (const [i, message] of body.messages.entries()) add(['messages', i, 'content'], message?.content);
  for (const [path, block] of blocks) {
    const own = cacheControlOf(block);
    if (own) yield { path: [...path, 'cache_control'], cacheControl: own } satisfies Breakpoint;
    const inner = (block as { content?: unknown } | null)?.content;
    if (!Array.isArray(inner)) continue;
    for (const [i, nested] of inner.entries()) {
      const found = cacheControlOf(nested);
      if (found)
        yield { path: [...path, 'content', i, 'cache_control'], cacheControl: found } satisfies Breakpoint;
    }
  }
}

/** Whether the request asks Anthropic to write its prompt cache anywhere. */
export function writesPromptCache(body: { system?: unknown; messages?: unknown; tools?: unknown }): boolean {
  return !cacheBreakpoints(body).next().done;
}
