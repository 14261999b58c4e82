/**
 * A scripted OpenAI-compatible Chat Completions endpoint on loopback, for `brood acp` child processes
 * (whose config names an HTTP endpoint, not in-process scripts). A rule is chosen by the conversation's
 * latest user message; its step by how many assistant messages followed that message. Text streams as
 * SSE deltas in two chunks. `hang` keeps the request open until the client gives up (cancellation);
 * `status` answers with that HTTP error.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type EndpointStep =
  | { text: string; delayMs?: number }
  | { toolCalls: { name: string; arguments: Record<string, unknown> }[] }
  | { hang: true }
  | { status: number };
export interface EndpointRule {
  match: string;
  steps: EndpointStep[];
}

interface Body {
  messages: { role: string; content: string | null }[];
}

export interface ScriptedEndpoint {
  baseURL: string;
  /** Requests currently held open by a `hang` step. */
  hanging(): number;
  /** The latest user message of every request so far. */
  prompts: string[];
  close(): Promise<void>;
}

export async function startScriptedEndpoint(rules: EndpointRule[]): Promise<ScriptedEndpoint> {
  let hanging = 0;
  const prompts: string[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(raw) as Body;
      prompts.push(lastUserText(body));
      const step = stepFor(body, rules);
      if ('status' in step) {
        res
          .writeHead(step.status, { 'content-type': 'application/json' })
          .end('{"error":{"message":"scripted endpoint failure"}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if ('hang' in step) {
        hanging += 1;
        open.add(res);
        res.write(`data: ${JSON.stringify(choice({ role: 'assistant', content: '' }))}\n\n`);
        res.on('close', () => {
          hanging -= 1;
          open.delete(res);
        });
        return;
      }
      const reply = (): void => {
        for (const chunk of chunks(step, body)) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
        res.end('data: [DONE]\n\n');
      };
      if ('text' in step && step.delayMs !== undefined) setTimeout(reply, step.delayMs);
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    hanging: () => hanging,
    prompts,
    close: () =>
      new Promise((resolve) => {
        for (const res of open) res.destroy();
        server.close(() => resolve());
      }),
  };
}

function lastUserText(body: Body): string {
  const lastUser = body.messages.map((m) => m.role).lastIndexOf('user');
  return body.messages[lastUser]?.content ?? '';
}

function stepFor(body: Body, rules: EndpointRule[]): EndpointStep {
  const lastUser = body.messages.map((m) => m.role).lastIndexOf('user');
  const prompt = lastUserText(body);
  const rule = rules.find((r) => prompt.includes(r.match));
  const position = body.messages.slice(lastUser + 1).filter((m) => m.role === 'assistant').length;
  return rule?.steps[position] ?? { text: `model heard: ${prompt}` };
}

function chunks(
  step: { text: string } | { toolCalls: { name: string; arguments: Record<string, unknown> }[] },
  body: Body,
): unknown[] {
  const usage = { choices: [], usage: { prompt_tokens: 30, completion_tokens: 5 } };
  if ('toolCalls' in step) {
    const calls = step.toolCalls.map((call, index) => ({
      index,
      id: `call_${body.messages.length}_${index}`,
      type: 'function',
      function: { name: call.name, arguments: JSON.stringify(call.arguments) },
    }));
    return [choice({ tool_calls: calls }), choice({}, 'tool_calls'), usage];
  }
  const text = fill(step.text, body);
  const cut = Math.ceil(text.length / 2);
  return [
    choice({ role: 'assistant', content: text.slice(0, cut) }),
    choice({ content: text.slice(cut) }),
    choice({}, 'stop'),
    usage,
  ];
}

/** `{{results}}`: the tool results after the last assistant message; `{{turns}}`: user messages so far. */
function fill(text: string, body: Body): string {
  const lastAssistant = body.messages.map((m) => m.role).lastIndexOf('assistant');
  const results = body.messages
    .slice(lastAssistant + 1)
    .filter((m) => m.role === 'tool')
    .map((m) => m.content ?? '');
  const turns = body.messages.filter((m) => m.role === 'user').length;
  return text.replace('{{results}}', results.join(' | ')).replace('{{turns}}', String(turns));
}

function choice(delta: Record<string, unknown>, finish: string | null = null): unknown {
  return { id: 'chatcmpl-acp', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] };
}
