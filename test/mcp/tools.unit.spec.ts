import { describe, expect, it } from 'vitest';
import { describeIssues, ToolArgumentsError } from '../../src/mcp/tool.ts';
import { ALL_TOOLS, servedTools, toolsFor } from '../../src/mcp/tools/index.ts';
import type { Twin } from '../../src/mcp/twin.ts';

const context = {
  twin: (async () => {
    throw new Error('no twin in a unit test');
  }) as Twin,
  publish: async () => ({ url: '', expires_at: 0 }),
};

describe('the MCP tool definitions', () => {
  it('have unique snake_case names, a description and an object JSON Schema each', () => {
    const names = ALL_TOOLS.map((tool) => tool.name);
    expect(new Set(names).size).toBe(names.length);
    for (const tool of ALL_TOOLS) {
      expect(tool.name).toMatch(/^[a-z][a-z_]*$/);
      expect(tool.description.length).toBeGreaterThan(20);
      expect(tool.inputSchema).toMatchObject({ type: 'object' });
      expect(() => JSON.stringify(tool.inputSchema)).not.toThrow();
    }
  });

  it('take a cost tag on every model tool, and mark only the read tools read-only', () => {
    for (const tool of ALL_TOOLS) {
      if (tool.access === 'model')
        expect(Object.keys(tool.inputSchema.properties as object)).toContain('tag');
      expect(tool.annotations.readOnlyHint).toBe(tool.access === 'read');
    }
  });

  it('refuse bad arguments before any call, naming each field', async () => {
    const chat = ALL_TOOLS.find((tool) => tool.name === 'chat');
    const refused = await chat
      ?.call({ prompt: 'hi', temperature: 9, stop: 3 }, context)
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ToolArgumentsError);
    expect((refused as Error).message).toMatch(/^Invalid arguments: 'temperature': .*; 'stop': /);
    expect(
      describeIssues([
        { code: 'invalid_type', expected: 'string', path: ['id'], message: 'x', input: undefined },
      ]),
    ).toBe("Invalid arguments: 'id': required");
  });

  it('offer the eval tools only where their routes are, write tools only when enabled, management only to main keys', () => {
    const noEvals = servedTools(({ url }) => !url.startsWith('/v1/evals')).map((tool) => tool.name);
    expect(noEvals).not.toContain('get_eval');
    expect(noEvals).not.toContain('start_eval');
    const tools = servedTools(() => true);
    const holder = { keyId: 'k', accountId: 'a', keyHash: 'h', subAccountId: null };
    const readOnly = [...toolsFor(tools, { holder, writeTools: false }).keys()];
    expect(readOnly).not.toContain('start_job');
    const main = [...toolsFor(tools, { holder, writeTools: true }).keys()];
    expect(main).toEqual(
      expect.arrayContaining(['create_sub_account', 'set_budget', 'start_job', 'start_eval']),
    );
    const sub = [...toolsFor(tools, { holder: { ...holder, subAccountId: 's' }, writeTools: true }).keys()];
    expect(sub).toContain('start_job');
    expect(sub).not.toContain('create_sub_account');
    expect(sub).not.toContain('set_budget');
  });
});
