/**
 * The crash-resume tree (test/support/fixtures/resume-tree.mjs) seen from the test process: a loopback
 * model server outside every killed process that counts each request by run, conversation and step,
 * and readers for what the sessions and the side-effect file hold afterwards.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileSessions, type SessionEvent } from '../../src/index.js';
import { ofType } from './events.js';

interface ChatBody {
  messages: { role: string; content: string | null }[];
}

/** What each conversation (its first user message) asks for, by step. */
function script(prompt: string, step: number, results: string[]): { calls?: [string, object][]; text?: string } {
  if (step > 0) return { text: `${prompt} => ${results.join(' | ')}` };
  if (prompt === 'root: build')
    return {
      calls: [
        ['subagent', { description: 'a', prompt: 'mid a' }],
        ['subagent', { description: 'b', prompt: 'mid b' }],
        ['charge', { tag: 'root' }],
      ],
    };
  if (prompt.startsWith('mid '))
    return {
      calls: [
        ['subagent', { description: 'leaf', prompt: `leaf ${prompt}` }],
        ['charge', { tag: prompt }],
        ['upsert', { tag: prompt }],
      ],
    };
  return {
    calls: [
      ['charge', { tag: prompt }],
      ['upsert', { tag: prompt }],
    ],
  };
}

/** The request key: which run (the base URL's first segment), which conversation, which step. */
function keyOf(url: string, body: ChatBody): string {
  const prompt = body.messages.find((m) => m.role === 'user')?.content ?? '';
  return `${url.split('/')[1]} ${prompt}#${body.messages.filter((m) => m.role === 'assistant').length}`;
}

/** The streamed answer; call ids start with `idPrefix` (a held answer's are told apart by theirs). */
function answer(body: ChatBody, idPrefix: string): unknown[] {
  const prompt = body.messages.find((m) => m.role === 'user')?.content ?? '';
  const step = body.messages.filter((m) => m.role === 'assistant').length;
  const lastAssistant = body.messages.map((m) => m.role).lastIndexOf('assistant');
  const results = body.messages.slice(lastAssistant + 1).flatMap((m) => (m.role === 'tool' ? [m.content ?? ''] : []));
  const { calls, text } = script(prompt, step, results);
  const usage = { choices: [], usage: { prompt_tokens: 10, completion_tokens: 5 } };
  const chunk = (delta: object, finish: string | null = null) => ({
    id: 'chatcmpl-r',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  if (calls) {
    const toolCalls = calls.map(([name, args], index) => ({
      index,
      id: `${idPrefix}${step}_${index}`,
      type: 'function',
      function: { name, arguments: JSON.stringify(args) },
    }));
    return [chunk({ role: 'assistant', tool_calls: toolCalls }), chunk({}, 'tool_calls'), usage];
  }
  return [chunk({ role: 'assistant', content: text }), chunk({}, 'stop'), usage];
}

interface Hold {
  /** Resolves when the held request arrived (its sender is then mid-request). */
  arrived: Promise<void>;
  /** Resolves when the same key is requested again (a resumed driver asked it). */
  askedAgain: Promise<void>;
  /** Answers the held request, its call ids starting `zombie`. */
  release(): void;
}

interface HoldState {
  arrived(): void;
  again(): void;
  released: Promise<void>;
}

export class ModelServer {
  /** Requests per key, across every process that sent them. */
  readonly sent = new Map<string, number>();
  private readonly holds = new Map<string, HoldState>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<ModelServer> {
    let self!: ModelServer;
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
      req.on('end', () => self.handle(req.url ?? '', JSON.parse(raw) as ChatBody, res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self = new ModelServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return self;
  }

  /** The first request with `key` waits for `release()`; later ones are answered as usual. */
  hold(key: string): Hold {
    let release!: () => void;
    let arrived!: () => void;
    let again!: () => void;
    const hold: Hold = {
      arrived: new Promise<void>((resolve) => (arrived = resolve)),
      askedAgain: new Promise<void>((resolve) => (again = resolve)),
      release: () => release(),
    };
    this.holds.set(key, { arrived, again, released: new Promise<void>((resolve) => (release = resolve)) });
    return hold;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(url: string, body: ChatBody, res: ServerResponse): void {
    const key = keyOf(url, body);
    const count = (this.sent.get(key) ?? 0) + 1;
    this.sent.set(key, count);
    const reply = (idPrefix: string): void => {
      if (res.destroyed) return;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const chunk of answer(body, idPrefix)) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      res.end('data: [DONE]\n\n');
    };
    const hold = this.holds.get(key);
    if (hold && count === 1) {
      hold.arrived();
      void hold.released.then(() => reply('zombie'));
      return;
    }
    hold?.again();
    // A little latency, different per conversation, so kills land while requests are in flight too.
    setTimeout(() => reply('c'), 5 + (key.length % 4) * 5);
  }
}

/** The request counts' namespace of a run directory (its base URL's first path segment). */
export function namespaceOf(dir: string): string {
  return dir.split('/').slice(-2).join('_');
}

export async function readAll(dir: string): Promise<Map<string, SessionEvent[]>> {
  const store = fileSessions(dir);
  const all = new Map<string, SessionEvent[]>();
  for (const header of await store.list()) all.set(header.id, (await store.read(header.id)).events);
  return all;
}

/** The request keys whose answers the log holds: per conversation, one per logged assistant message. */
export function answeredKeys(sessions: Map<string, SessionEvent[]>, namespace: string): string[] {
  const keys: string[] = [];
  for (const events of sessions.values()) {
    const prompt = ofType(events, 'user/message')[0]?.data.text;
    const answers = ofType(events, 'assistant/message').filter((e) => e.data.finish !== 'error');
    for (let step = 0; step < answers.length; step++) keys.push(`${namespace} ${prompt}#${step}`);
  }
  return keys;
}

/** The side effects, one line per run: kind, agent, call id, tag. */
export function effects(dir: string): string[] {
  const file = join(dir, 'effects.log');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

export function rootOutput(sessions: Map<string, SessionEvent[]>): string | undefined {
  return ofType(sessions.get('root') ?? [], 'assistant/message').at(-1)?.data.text as string | undefined;
}
