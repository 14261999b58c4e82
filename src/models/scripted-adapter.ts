/** The scripted adapter: deterministic replies from scripts, with fault injection (SPEC §8). */

import { isMainThread } from 'node:worker_threads';
import type { Usage } from '../types.js';
import { sleep, throwIfAborted } from './abort.js';
import { cancellationOf } from './cancellation.js';
import { base64DecodedLength, isUrlData } from './content-parts.js';
import { type ScriptedScript, type ScriptedTurn, scriptedOptionsOf } from './scripted.js';
import type {
  ChatMessage,
  ModelAdapter,
  ModelProviderConfig,
  ModelRequest,
  ModelResponse,
  ToolCallRecord,
} from './types.js';

type Matcher = (prompt: string) => boolean;
type Fault = Extract<ScriptedTurn, { fault: string }>['fault'];

export function createScriptedAdapter(config: ModelProviderConfig): ModelAdapter {
  const { scripts, fallback } = scriptedOptionsOf(config);
  // Compile once: a RegExp-per-request would be wasteful in benchmarks that issue thousands.
  const compiled = scripts.map((script) => ({ script, matches: compileMatcher(script.match) }));
  return {
    // A chain, not an async function: a request waiting out its latency (a wide fan-out holds one per
    // running child) keeps a timer and one reaction, not a suspended frame.
    request(request) {
      try {
        const cancel = cancellationOf(request);
        throwIfAborted(cancel);
        const own = request.messages.slice(request.ownStart);
        const prompt = firstUserText(own);
        const script = compiled.find((c) => c.matches(prompt))?.script;
        if (script === undefined) return Promise.resolve(fallbackReply(request, prompt, fallback));
        const answer = (): ModelResponse | Promise<ModelResponse> => {
          if (script.cpuMs !== undefined && script.cpuMs > 0) burnCpu(script.cpuMs);
          throwIfAborted(cancel);
          return playTurn(request, own, script);
        };
        const { latencyMs } = script;
        return latencyMs !== undefined && latencyMs > 0
          ? sleep(latencyMs, cancel).then(answer)
          : Promise.resolve(answer());
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
}

/** `/source/flags` is a regular expression; anything else is a plain substring. */
function compileMatcher(match: string): Matcher {
  const literal = /^\/(.*)\/([a-z]*)$/s.exec(match);
  if (literal === null) return (prompt) => prompt.includes(match);
  const regex = new RegExp(literal[1] ?? '', literal[2]);
  return (prompt) => {
    regex.lastIndex = 0; // `g`/`y` flags make test() stateful; every agent must match independently
    return regex.test(prompt);
  };
}

function fallbackReply(request: ModelRequest, prompt: string, fallback: 'echo' | 'error'): ModelResponse {
  if (fallback === 'echo') return reply(request, { text: prompt, toolCalls: [], finish: 'stop' });
  return reply(request, {
    text: '',
    toolCalls: [],
    finish: 'error',
    diagnostic: `no script matched the prompt and fallback is 'error'`,
  });
}

function playTurn(
  request: ModelRequest,
  own: ChatMessage[],
  script: ScriptedScript,
): ModelResponse | Promise<ModelResponse> {
  // Position counts the agent's own assistant messages, so a resumed/recovered agent continues where
  // its log ends and identical siblings each walk the whole script.
  const position = own.filter((m) => m.role === 'assistant').length;
  const turn: ScriptedTurn = script.turns[position] ?? { text: '{{results}}' };
  const fill = (text: string | undefined): string => fillTemplate(text ?? '', own);
  if ('fault' in turn) return runFault(turn.fault);
  if ('finish' in turn) return reply(request, { text: fill(turn.text), toolCalls: [], finish: turn.finish });
  if ('toolCalls' in turn) {
    const toolCalls = turn.toolCalls.map((call, index) => ({
      callId: `call_${position}_${index}`, // deterministic: a re-issued request gets the same ids
      name: call.name,
      arguments: argumentText(call.arguments),
    }));
    return reply(request, { text: fill(turn.text), toolCalls, finish: 'tool-calls' });
  }
  return reply(request, { text: fill(turn.text), toolCalls: [], finish: 'stop' });
}

/** Objects go out as JSON; strings are the raw argument text, so a script can send malformed JSON. */
function argumentText(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? '{}';
}

/**
 * Single pass, so a prompt that itself contains `{{results}}` is not expanded again. `{{media}}` lists
 * the media the model was shown (the agent's own messages' images and files), so a test sees them arrive.
 */
function fillTemplate(text: string, own: ChatMessage[]): string {
  return text.replace(/\{\{(prompt|results|media)\}\}/g, (_all, name: string) =>
    name === 'prompt' ? firstUserText(own) : name === 'media' ? mediaSeen(own) : previousResults(own),
  );
}

/** `image/png (8 bytes)` per media part, in order; a URL part as its URL. */
function mediaSeen(own: ChatMessage[]): string {
  const seen: string[] = [];
  for (const message of own) {
    if (message.role === 'assistant') continue;
    for (const part of message.parts ?? []) {
      if (part.type === 'text') continue;
      const size = isUrlData(part.data) ? part.data : `${base64DecodedLength(part.data)} bytes`;
      seen.push(`${part.type} ${part.mediaType} (${size})`);
    }
  }
  return seen.join(', ');
}

function firstUserText(own: ChatMessage[]): string {
  return own.find((m) => m.role === 'user')?.text ?? '';
}

/** Tool results of the previous step: the tool messages after the last assistant message, in order. */
function previousResults(own: ChatMessage[]): string {
  let lastAssistant = -1;
  own.forEach((m, i) => {
    if (m.role === 'assistant') lastAssistant = i;
  });
  if (lastAssistant < 0) return '';
  const results: string[] = [];
  for (const m of own.slice(lastAssistant + 1)) if (m.role === 'tool') results.push(m.content);
  return results.join('\n');
}

function reply(
  request: ModelRequest,
  out: { text: string; toolCalls: ToolCallRecord[]; finish: ModelResponse['finish']; diagnostic?: string },
): ModelResponse {
  if (out.text !== '' && request.onTextDelta) for (const chunk of wordChunks(out.text)) request.onTextDelta(chunk);
  const response: ModelResponse = {
    text: out.text,
    toolCalls: out.toolCalls,
    finish: out.finish,
    usage: usageOf(request, out),
  };
  if (out.diagnostic !== undefined) response.diagnostic = out.diagnostic;
  return response;
}

/**
 * Word-sized streaming chunks (each word with the whitespace after it; leading whitespace alone), so a
 * host can test its live UI deterministically. Joined, they are exactly the text.
 */
export function wordChunks(text: string): string[] {
  return text.match(/^\s+|\S+\s*/g) ?? [];
}

/** SPEC §8 usage arithmetic: characters / 4, rounded up. */
export function usageOf(
  request: Pick<ModelRequest, 'system' | 'messages'>,
  out: { text: string; toolCalls: ToolCallRecord[] },
): Usage {
  let input = request.system.length;
  for (const m of request.messages) {
    if (m.role === 'tool') input += m.content.length;
    else input += m.text.length + (m.role === 'assistant' ? argumentChars(m.toolCalls) : 0);
  }
  return {
    inputTokens: Math.ceil(input / 4),
    outputTokens: Math.ceil((out.text.length + argumentChars(out.toolCalls)) / 4),
  };
}

function argumentChars(calls: ToolCallRecord[]): number {
  return calls.reduce((sum, call) => sum + call.arguments.length, 0);
}

/**
 * Faults only make sense inside a disposable worker: on the main thread they would take the host
 * down, so they are refused without running (the turn ends `error`).
 */
function runFault(fault: Fault): ModelResponse | Promise<ModelResponse> {
  if (isMainThread) {
    return {
      text: '',
      toolCalls: [],
      finish: 'error',
      usage: { inputTokens: 0, outputTokens: 0 },
      diagnostic: `fault turn '${fault}' refused on the main thread`,
    };
  }
  switch (fault) {
    case 'exit':
      return process.exit(1);
    case 'throw':
      // Outside any promise chain, so it surfaces as an uncaught exception of the worker, not a rejection.
      setImmediate(() => {
        throw new Error('scripted fault: throw');
      });
      return new Promise<never>(() => {});
    case 'oom':
      return allocateForever();
    case 'hang':
      return spinForever();
  }
}

function allocateForever(): never {
  const retained: number[][] = [];
  for (;;) retained.push(new Array<number>(1 << 20).fill(retained.length));
}

function spinForever(): never {
  // Deliberately synchronous: cancellation can only be delivered by terminating the thread.
  for (;;) {
    /* spin */
  }
}

function burnCpu(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    /* burn */
  }
}
