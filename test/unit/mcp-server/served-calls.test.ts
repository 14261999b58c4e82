/**
 * The MCP server's pure parts: argument checks (INVALID_ARGS naming the key), results (the code first
 * in an error's text), and which events become progress lines.
 */
import { describe, expect, it } from 'vitest';
import { BroodError } from '../../../src/errors.js';
import { parseDelegateArgs, parseListModelsArgs } from '../../../src/mcp/server/arguments.js';
import { progressText } from '../../../src/mcp/server/progress.js';
import { errorResult, outcomeResult } from '../../../src/mcp/server/results.js';
import { expectCode } from '../../support/codes.js';

describe('delegate arguments', () => {
  it('takes description and prompt, and splits model at the first slash', () => {
    expect(parseDelegateArgs({ description: 'd', prompt: 'p' }, false)).toEqual({ description: 'd', prompt: 'p' });
    expect(parseDelegateArgs({ description: 'd', prompt: 'p', model: 'gw/org/model' }, true)).toMatchObject({
      provider: 'gw',
      model: 'org/model',
    });
  });

  it('refuses missing, unknown and mistyped keys, a model without selection, and a model without provider', () => {
    expectCode(() => parseDelegateArgs({ prompt: 'p' }, true), 'INVALID_ARGS');
    expectCode(() => parseDelegateArgs({ description: 'd', prompt: 'p', persona: 'x' }, true), 'INVALID_ARGS');
    expectCode(() => parseDelegateArgs({ description: 'd', prompt: 'p', output_schema: 'x' }, true), 'INVALID_ARGS');
    expectCode(() => parseDelegateArgs({ description: 'd', prompt: 'p', model: 'a/b' }, false), 'INVALID_ARGS');
    expectCode(() => parseDelegateArgs({ description: 'd', prompt: 'p', model: 'nomodel' }, true), 'INVALID_ARGS');
    expectCode(() => parseDelegateArgs('not an object', true), 'INVALID_ARGS');
    expectCode(() => parseListModelsArgs({ everything: true }), 'INVALID_ARGS');
  });
});

describe('results', () => {
  it('puts the brood code first in an error text and in _meta', () => {
    const result = errorResult(new BroodError('DEPTH_EXCEEDED', 'too deep'));
    expect(result).toMatchObject({ isError: true, _meta: { 'brood/errorCode': 'DEPTH_EXCEEDED' } });
    expect(result.content).toEqual([{ type: 'text', text: '[DEPTH_EXCEEDED] too deep' }]);
    expect(errorResult(new Error('subagent run failed')).content).toEqual([
      { type: 'text', text: 'subagent run failed' },
    ]);
  });

  it('carries structured output as structuredContent only when it is an object', () => {
    expect(outcomeResult({ text: '', structured: { a: 1 } })).toMatchObject({ structuredContent: { a: 1 } });
    expect(outcomeResult({ text: '', structured: [1] }).structuredContent).toBeUndefined();
    expect(outcomeResult({ text: 'plain' })).toEqual({ content: [{ type: 'text', text: 'plain' }] });
  });
});

describe('progress', () => {
  const base = { agentId: 'a', parentId: undefined, depth: 1, time: 0 };
  it("tells child turns, tool calls and children; not the parent's own turn or text deltas", () => {
    expect(progressText({ ...base, type: 'turn-start', turn: 1, messageIds: [] })).toBe('a: turn 1 started');
    expect(progressText({ ...base, depth: 0, type: 'turn-start', turn: 1, messageIds: [] })).toBeUndefined();
    expect(progressText({ ...base, type: 'tool-start', turn: 1, callId: 'c', name: 'read_file', args: {} })).toBe(
      'a: calls read_file',
    );
    expect(progressText({ ...base, type: 'text-delta', turn: 1, delta: 'x' })).toBeUndefined();
  });
});

describe("a client's output_schema", () => {
  const args = (outputSchema: unknown) => ({ description: 'd', prompt: 'p', output_schema: outputSchema });

  it('is refused when any schema in it carries pattern, patternProperties or format, naming keyword and place', () => {
    const cases: [unknown, string, string][] = [
      [{ type: 'string', pattern: '^(a+)+$' }, 'pattern', 'output_schema'],
      [{ type: 'object', patternProperties: { '^x': {} } }, 'patternProperties', 'output_schema'],
      [{ properties: { when: { type: 'string', format: 'date-time' } } }, 'format', 'output_schema.properties.when'],
      [{ items: [{}, { anyOf: [{ pattern: 'a' }] }] }, 'pattern', 'output_schema.items[1].anyOf[0]'],
      [
        { properties: { a: { propertyNames: { pattern: 'a' } } } },
        'pattern',
        'output_schema.properties.a.propertyNames',
      ],
      [{ definitions: { d: { not: { format: 'email' } } } }, 'format', 'output_schema.definitions.d.not'],
      [{ 'x-unknown': { pattern: 'a' } }, 'pattern', 'output_schema.x-unknown'],
    ];
    for (const [schema, keyword, path] of cases) {
      const error = expectCode(() => parseDelegateArgs(args(schema), false), 'INVALID_ARGS');
      expect(error.details).toEqual({ keyword, path });
    }
  });

  it('may name properties pattern or format, and hold such keys in data keywords', () => {
    const schema = {
      type: 'object',
      properties: { pattern: { type: 'string' }, format: { type: 'string', enum: ['a'] } },
      required: ['pattern'],
      default: { pattern: 'a', format: 'b' },
      examples: [{ pattern: '^(a+)+$' }],
    };
    expect(parseDelegateArgs(args(schema), false).outputSchema).toEqual(schema);
  });

  it('is walked without recursion: a 100,000-deep schema is checked, not a stack overflow', () => {
    let deep: Record<string, unknown> = { type: 'string', pattern: 'a' };
    for (let level = 0; level < 100_000; level++) deep = { items: deep };
    expectCode(() => parseDelegateArgs(args(deep), false), 'INVALID_ARGS');
  });
});
