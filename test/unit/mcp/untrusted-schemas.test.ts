/**
 * An MCP server someone other than the host named (an ACP client's, `untrustedSchemas: true`): a tool
 * schema's regular expressions never run in brood's process. The model still sees the schema as the
 * server wrote it, and the server validates those calls. A host's own server keeps brood's validation.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood } from '../../../src/index.js';
import { createBrood } from '../../../src/index.js';
import { parseMcpConfig } from '../../../src/mcp/config.js';
import { McpToolSet } from '../../../src/mcp/tool-set.js';

// A catastrophically backtracking pattern: tested against this argument it would block for minutes.
const EVIL = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } }, required: ['s'] };
const ARGUMENT = JSON.stringify({ s: `${'a'.repeat(40)}!` });

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

function mount(untrustedSchemas: boolean) {
  brood = createBrood({ runner: 'inline' });
  const calls: unknown[] = [];
  const config = parseMcpConfig({ name: 'srv', command: 'unused' }, { untrustedSchemas });
  const set = new McpToolSet(brood.tools, config, async (_name, args) => {
    calls.push(args);
    return { content: [{ type: 'text', text: 'server checked it' }] };
  });
  set.sync([{ name: 'evil', inputSchema: EVIL }], true);
  return { tools: brood.tools, calls };
}

describe('MCP tool schemas from a server the host did not name', () => {
  it('are shown to the model with their pattern, but the pattern never runs here: the server validates', async () => {
    const { tools, calls } = mount(true);
    const presented = tools.view().schemas.find((schema) => schema.name === 'mcp__srv__evil');
    expect(presented?.parameters).toMatchObject({ properties: { s: { pattern: '^(a+)+$' } } });
    const result = await tools.execute({ callId: 'c1', name: 'mcp__srv__evil', arguments: ARGUMENT });
    expect(result).toMatchObject({ isError: false, content: 'server checked it' });
    expect(calls).toEqual([JSON.parse(ARGUMENT)]);
  });

  it("a host's own server keeps brood's validation of its schema (a short refused argument never reaches it)", async () => {
    const { tools, calls } = mount(false);
    const result = await tools.execute({ callId: 'c1', name: 'mcp__srv__evil', arguments: '{"s":"b"}' });
    expect(result).toMatchObject({ isError: true, error: { code: 'INVALID_ARGS' } });
    expect(calls).toEqual([]);
  });
});
