/** The capped line framing MCP's stdio transport and `brood acp` read with (src/util/json-lines.ts). */
import { describe, expect, it } from 'vitest';
import { idFromHead, type Line, LineSplitter } from '../../../src/util/json-lines.js';

function split(splitter: LineSplitter, chunks: string[]): (string | { oversized: number; head: string })[] {
  const out: Line[] = [];
  for (const chunk of chunks) out.push(...splitter.push(Buffer.from(chunk)));
  const last = splitter.flush();
  if (last !== undefined) out.push(last);
  return out.map((line) =>
    line.kind === 'line' ? line.bytes.toString('utf8') : { oversized: line.bytes, head: line.head },
  );
}

describe('LineSplitter', () => {
  it('splits on newlines across chunks, drops a CR before the newline, flushes an unterminated tail', () => {
    expect(split(new LineSplitter(100), ['{"a":', '1}\r\n{"b"', ':2}\n\n', 'tail'])).toEqual([
      '{"a":1}',
      '{"b":2}',
      '',
      'tail',
    ]);
  });

  it('reports a line over the cap once, with its size and first bytes, and goes on with the next line', () => {
    const long = `{"id":7,"x":"${'y'.repeat(50)}"}`;
    const lines = split(new LineSplitter(20), [long.slice(0, 10), long.slice(10, 30), `${long.slice(30)}\nok\n`]);
    expect(lines).toEqual([{ oversized: long.length, head: long.slice(0, 30) }, 'ok']); // head: what came before the cap broke
  });

  it('a line of exactly the cap is a line', () => {
    expect(split(new LineSplitter(5), ['12345\n123456\n'])).toEqual(['12345', { oversized: 6, head: '123456' }]);
  });
});

describe('idFromHead', () => {
  it.each([
    ['{"jsonrpc":"2.0","id":42,"method":"x","params":{"p":"', 42],
    ['{ "id" : "req-1" , "result": {"content":[', 'req-1'],
    ['{"jsonrpc":"2.0","method":"x","params":{"id":5,"s":"\\"id\\":6"},"id":-3,"x":"', -3],
    ['{"method":"id","id":9}', 9],
  ])('finds the top-level id in %s', (head, id) => {
    expect(idFromHead(head)).toBe(id);
  });

  it.each([
    ['{"jsonrpc":"2.0","method":"x","params":{"id":5,"text":"'],
    ['{"jsonrpc":"2.0","id":{"a":1},"method":"x"}'],
    ['{"jsonrpc":"2.0","id":12'],
    ['not json at all'],
  ])('finds none in %s', (head) => {
    expect(idFromHead(head)).toBeUndefined();
  });
});
