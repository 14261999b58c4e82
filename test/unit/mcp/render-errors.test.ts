/** An MCP tool's `isError` result is the server's answer: the model reads its text, and the host is not told of a fault. */
import { expect, it } from 'vitest';
import { renderResult } from '../../../src/mcp/render.js';
import { thrownByTool } from '../../../src/tools/thrown.js';

it("an isError result reads as Error: <the server's text> and reaches no diagnostic", () => {
  let thrown: unknown;
  try {
    renderResult('read', { isError: true, content: [{ type: 'text', text: 'Access denied' }] });
  } catch (error) {
    thrown = error;
  }
  const reported: string[] = [];
  const result = thrownByTool('mcp__fs__read', thrown, (message) => reported.push(message));
  expect(result).toMatchObject({ isError: true, content: 'Error: Access denied' });
  expect(reported).toEqual([]);
});
