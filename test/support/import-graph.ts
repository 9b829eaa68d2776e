import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** One import of one file: `from` and `to` are repository-relative paths (`src/chat/service.ts`). */
export interface ImportEdge {
  from: string;
  to: string;
}

/** A bare or `node:` specifier: the package a file depends on (`zod`, `node`, `@pydantic/genai-prices`). */
export interface PackageUse {
  from: string;
  pkg: string;
}

// Regexes rather than the TypeScript compiler: the repository's imports are plain ES module syntax, and a
// false hit in a comment can only make the test stricter, never let an edge through unseen.
const specifiers = [
  /\bfrom\s*['"]([^'"\n]+)['"]/g, // import … from '…' and export … from '…', across lines
  /\bimport\s*['"]([^'"\n]+)['"]/g, // import '…' for side effects
  /\bimport\s*\(\s*['"]([^'"\n]+)['"]\s*\)/g, // dynamic import('…')
];

function tsFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) out.push(...tsFiles(root, path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function resolveRelative(root: string, from: string, spec: string): string {
  let target = relative(root, resolve(root, dirname(from), spec));
  // NodeNext style imports name the `.ts` file; a `.js` spelling or a folder with index.ts still resolves.
  if (target.endsWith('.js')) target = `${target.slice(0, -3)}.ts`;
  else if (!target.endsWith('.ts')) {
    try {
      if (statSync(join(root, target)).isDirectory()) target = join(target, 'index.ts');
    } catch {
      target = `${target}.ts`;
    }
  }
  return target.split('\\').join('/');
}

function packageName(spec: string): string {
  if (spec.startsWith('node:')) return 'node';
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? spec);
}

/** Every import among the `.ts` files under `dirs` (spec files left out: tests may reach anywhere). */
export function importGraph(root: string, dirs: string[]): { edges: ImportEdge[]; packages: PackageUse[] } {
  const edges: ImportEdge[] = [];
  const packages: PackageUse[] = [];
  for (const dir of dirs) {
    for (const file of tsFiles(root, dir)) {
      if (file.endsWith('.spec.ts')) continue;
      const from = file.split('\\').join('/');
      const text = readFileSync(join(root, file), 'utf8');
      const seen = new Set<string>();
      for (const re of specifiers) {
        for (const match of text.matchAll(re)) {
          const spec = match[1] as string;
          if (seen.has(spec)) continue;
          seen.add(spec);
          if (spec.startsWith('.')) edges.push({ from, to: resolveRelative(root, from, spec) });
          else packages.push({ from, pkg: packageName(spec) });
        }
      }
    }
  }
  return { edges, packages };
}

/** Folder-level cycles: strongly connected components of more than one node (Tarjan). */
export function cycles(nodes: Iterable<string>, next: Map<string, Set<string>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of nodes) if (!index.has(v)) visit(v);
  return found;
}
