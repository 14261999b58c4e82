/**
 * An input whose getters or proxy traps throw — an options object, a request, a tool
 * definition, a provider — is refused at every public entry point with INVALID_CONFIG (configuration)
 * or INVALID_ARGS (one call's arguments), never a raw Error, and a refusal leaves nothing behind.
 * - every entry point × a proxy whose every trap throws, a revoked proxy, and a throwing getter on each
 *   key the entry point reads → exactly its refusal code;
 * - fast-check: any one trap, any thrown value (strings, null, proxies that throw on inspection) →
 *   success or a BroodError, never anything else, and a refusal changes no registry or session.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent, Brood, BroodErrorCode } from '../../../src/index.js';
import {
  acpProvider,
  aiSdkModels,
  anthropicCompatible,
  BroodError,
  createBrood,
  defineTool,
  fileSessions,
  forkProvider,
  inlineProvider,
  mcpTools,
  moduleAdapter,
  openAICompatible,
  queueRunner,
  scriptedModels,
  spawnProvider,
  subagentTool,
} from '../../../src/index.js';
import { route } from '../../support/route.js';

type Mode = { kind: 'traps' } | { kind: 'revoked' } | { kind: 'getter'; key: string } | { kind: 'trap'; trap: Trap };
type Trap = (typeof TRAPS)[number];
const TRAPS = ['get', 'has', 'ownKeys', 'getOwnPropertyDescriptor', 'getPrototypeOf', 'defineProperty'] as const;

/** A value whose every inspection throws: thrown by a getter, it must not break the refusal either. */
const unprintable = new Proxy(
  {},
  allTraps(() => new Error('inspected')),
);

function allTraps(thrown: () => unknown): ProxyHandler<object> {
  const handler: ProxyHandler<object> = {};
  for (const trap of [...TRAPS, 'set', 'deleteProperty', 'isExtensible', 'preventExtensions', 'setPrototypeOf'])
    (handler as Record<string, unknown>)[trap] = () => {
      throw thrown();
    };
  return handler;
}

function hostile(base: Record<string, unknown>, mode: Mode, thrown: () => unknown): object {
  const target = { ...base };
  if (mode.kind === 'traps') return new Proxy(target, allTraps(thrown));
  if (mode.kind === 'trap')
    return new Proxy(target, {
      [mode.trap]: () => {
        throw thrown();
      },
    });
  if (mode.kind === 'revoked') {
    const { proxy, revoke } = Proxy.revocable(target, {});
    revoke();
    return proxy;
  }
  return Object.defineProperty(target, mode.key, {
    get: () => {
      throw thrown();
    },
    enumerable: true,
    configurable: true,
  });
}

interface Entry {
  name: string;
  code: BroodErrorCode;
  /** A valid input the hostile one is built from. */
  base: () => Record<string, unknown>;
  /** Keys the entry point reads (a throwing getter on one must be refused). */
  keys: string[];
  /** Calls the entry point; resolves with what it made (closed or disposed by `cleanup`). */
  call: (input: never) => unknown;
}

let brood: Brood;
let agent: Agent;
const signal = new AbortController().signal;
const jsonSchema = () => ({ type: 'object', properties: { city: { type: 'string' } } });
const declaration = () => ({ name: 'probe', description: 'probe', parameters: jsonSchema(), execute: () => 'ok' });

const ENTRIES: Entry[] = [
  {
    name: 'createBrood',
    code: 'INVALID_CONFIG',
    base: () => ({}),
    keys: ['models', 'pool', 'persona', 'sessions', 'runner', 'providers'],
    call: (o) => createBrood(o),
  },
  {
    name: 'createBrood pool',
    code: 'INVALID_CONFIG',
    base: () => ({ threads: 1 }),
    keys: ['threads', 'idleTimeoutMs', 'resourceLimits'],
    call: (o) => createBrood({ pool: o }),
  },
  {
    name: 'createBrood codeResourceLimits',
    code: 'INVALID_CONFIG',
    base: () => ({ memoryMb: 32 }),
    keys: ['memoryMb', 'stackKb', 'maxToolCalls'],
    call: (o) => createBrood({ codeResourceLimits: o }),
  },
  {
    name: 'createBrood models[0]',
    code: 'INVALID_CONFIG',
    base: () => ({ ...scriptedModels({ id: 'other' }) }),
    keys: ['kind', 'id', 'models', 'options'],
    call: (o) => createBrood({ models: [o] }),
  },
  {
    name: 'createAgent',
    code: 'INVALID_CONFIG',
    base: () => ({ model: route }),
    keys: ['model', 'id', 'persona', 'toolFilter', 'signal', 'maxSteps'],
    call: (o) => brood.createAgent(o),
  },
  {
    name: 'createAgent model',
    code: 'INVALID_CONFIG',
    base: () => ({ ...route }),
    keys: ['provider', 'model', 'maxTokens'],
    call: (o) => brood.createAgent({ model: o }),
  },
  {
    name: 'resumeAgent',
    code: 'INVALID_CONFIG',
    base: () => ({}),
    keys: ['model', 'depth', 'signal'],
    call: (o) => brood.resumeAgent(agent.id, o),
  },
  {
    name: 'brood.events',
    code: 'INVALID_CONFIG',
    base: () => ({}),
    keys: ['signal', 'buffer'],
    call: (o) => brood.events(o),
  },
  {
    name: 'agent.events',
    code: 'INVALID_CONFIG',
    base: () => ({}),
    keys: ['signal', 'buffer', 'descendants'],
    call: (o) => agent.events(o),
  },
  {
    name: 'run options',
    code: 'INVALID_ARGS',
    base: () => ({ signal }),
    keys: ['signal', 'outputSchema'],
    call: (o) => agent.run('hi', o),
  },
  {
    name: 'run outputSchema',
    code: 'INVALID_ARGS',
    base: jsonSchema,
    keys: ['type', 'properties'],
    call: (o) => agent.run('hi', { outputSchema: o }),
  },
  {
    name: 'send options',
    code: 'INVALID_ARGS',
    base: () => ({ signal }),
    keys: ['signal'],
    call: (o) => agent.send('hi', o),
  },
  {
    name: 'use',
    code: 'INVALID_CONFIG',
    base: () => ({ name: 'p', install: () => () => undefined }),
    keys: ['name', 'install'],
    call: (o) => brood.use(o),
  },
  {
    name: 'subagentTool',
    code: 'INVALID_CONFIG',
    base: () => ({ provider: 'spawn', toolName: 'delegate_probe' }),
    keys: ['provider', 'toolName', 'maxDepth', 'toolFilter'],
    call: (o) => brood.use(subagentTool(o)),
  },
  {
    name: 'mcpTools server',
    code: 'INVALID_CONFIG',
    base: () => ({ name: 's' }),
    keys: ['name', 'command', 'url'],
    call: (o) => brood.use(mcpTools(o)),
  },
  {
    name: 'mcpTools options',
    code: 'INVALID_CONFIG',
    base: () => ({ timeoutMs: 1 }),
    keys: ['timeoutMs', 'include', 'scope'],
    call: (o) => brood.use(mcpTools({ name: 's', command: 'brood-no-such-command' }, o)),
  },
  {
    name: 'openAICompatible',
    code: 'INVALID_CONFIG',
    base: () => ({ id: 'o', baseURL: 'http://127.0.0.1:1/v1', models: ['m'] }),
    keys: ['id', 'baseURL', 'models', 'retry'],
    call: (o) => openAICompatible(o),
  },
  {
    name: 'anthropicCompatible',
    code: 'INVALID_CONFIG',
    base: () => ({ id: 'a', baseURL: 'http://127.0.0.1:1', models: ['m'] }),
    keys: ['id', 'baseURL', 'models'],
    call: (o) => anthropicCompatible(o),
  },
  {
    name: 'scriptedModels',
    code: 'INVALID_CONFIG',
    base: () => ({ id: 's' }),
    keys: ['id', 'scripts', 'models'],
    call: (o) => scriptedModels(o),
  },
  {
    name: 'moduleAdapter',
    code: 'INVALID_CONFIG',
    base: () => ({ id: 'm', models: ['m'], moduleUrl: 'file:///adapter.mjs' }),
    keys: ['id', 'models', 'moduleUrl', 'options'],
    call: (o) => moduleAdapter(o),
  },
  {
    name: 'aiSdkModels',
    code: 'INVALID_CONFIG',
    base: () => ({ id: 'a', models: ['m'], module: 'file:///models.mjs', export: 'model' }),
    keys: ['id', 'models', 'module', 'export', 'options'],
    call: (o) => aiSdkModels(o),
  },
  {
    name: 'queueRunner',
    code: 'INVALID_CONFIG',
    base: () => ({ connection: 'redis://127.0.0.1:1' }),
    keys: ['connection', 'queue'],
    call: (o) => queueRunner(o),
  },
  {
    name: 'acpProvider',
    code: 'INVALID_CONFIG',
    base: () => ({ command: 'brood-no-such-agent' }),
    keys: ['command', 'args', 'permissions'],
    call: (o) => acpProvider(o),
  },
  {
    name: 'fileSessions',
    code: 'INVALID_CONFIG',
    base: () => ({}),
    keys: ['onWarning', 'maxOpenFiles'],
    call: (o) => fileSessions('/nonexistent/brood-sessions', o),
  },
  {
    name: 'spawnProvider',
    code: 'INVALID_CONFIG',
    base: () => ({ name: 'x' }),
    keys: ['name', 'runner'],
    call: (o) => spawnProvider(o),
  },
  {
    name: 'forkProvider',
    code: 'INVALID_CONFIG',
    base: () => ({ name: 'x' }),
    keys: ['name', 'allowRouteChange'],
    call: (o) => forkProvider(o),
  },
  {
    name: 'inlineProvider',
    code: 'INVALID_CONFIG',
    base: () => ({ name: 'x' }),
    keys: ['name'],
    call: (o) => inlineProvider(o),
  },
  {
    name: 'defineTool',
    code: 'INVALID_CONFIG',
    base: declaration,
    keys: ['name', 'description', 'parameters', 'execute'],
    call: (o) => defineTool(o),
  },
  {
    name: 'defineTool parameters',
    code: 'INVALID_CONFIG',
    base: jsonSchema,
    keys: ['type', 'properties'],
    call: (o) => defineTool({ ...declaration(), parameters: o }),
  },
  {
    name: 'tools.register',
    code: 'INVALID_CONFIG',
    base: () => ({ ...defineTool(declaration()) }),
    keys: ['name', 'parse', 'execute'],
    call: (o) => brood.tools.register(o),
  },
  {
    name: 'agent.tools.restrict',
    code: 'INVALID_CONFIG',
    base: () => ({ deny: ['alpha'] }),
    keys: ['allow', 'deny'],
    call: (o) => agent.tools.restrict(o),
  },
  {
    name: 'tools.execute',
    code: 'INVALID_ARGS',
    base: () => ({ name: 'alpha', arguments: {} }),
    keys: ['name', 'arguments', 'signal', 'callId'],
    call: (o) => executed(o),
  },
  {
    name: 'prompt.register',
    code: 'INVALID_CONFIG',
    base: () => ({ name: 'probe', text: 'probe' }),
    keys: ['name', 'text', 'order', 'tool'],
    call: (o) => brood.prompt.register(o),
  },
  {
    name: 'models.resolve',
    code: 'INVALID_CONFIG',
    base: () => ({ ...route }),
    keys: ['provider', 'model', 'reasoningEffort'],
    call: (o) => brood.models.resolve(o),
  },
  {
    name: 'subagents.register',
    code: 'INVALID_CONFIG',
    base: () => ({ ...spawnProvider({ name: 'probe' }) }),
    keys: ['name', 'start', 'capabilities'],
    call: (o) => brood.subagents.register(o),
  },
  {
    name: 'subagents.start',
    code: 'INVALID_ARGS',
    base: () => ({ parent: agent, prompt: 'p', signal }),
    keys: ['parent', 'prompt', 'signal', 'toolFilter', 'persona'],
    call: (o) => brood.subagents.start('spawn', o),
  },
  {
    name: 'subagents.start toolFilter',
    code: 'INVALID_ARGS',
    base: () => ({ deny: ['alpha'] }),
    keys: ['allow', 'deny'],
    call: (o) => brood.subagents.start('spawn', { parent: agent, prompt: 'p', signal, toolFilter: o }),
  },
  {
    name: 'subagents.startContinuable',
    code: 'INVALID_CONFIG',
    base: () => ({ provider: 'spawn', label: 'l', request: { parent: agent, prompt: 'p' }, signal }),
    keys: ['provider', 'label', 'request', 'signal'],
    call: (o) => brood.subagents.startContinuable(o),
  },
  {
    name: 'subagents.followup',
    code: 'INVALID_ARGS',
    base: () => ({ signal }),
    keys: ['signal'],
    call: (o) => brood.subagents.followup(agent, 'sub_none', 'hi', o),
  },
];

/** tools.execute never rejects: its refusal is the result's error code. */
async function executed(call: never): Promise<unknown> {
  const result = await brood.tools.execute(call);
  if (result.isError) throw new BroodError((result.error?.code ?? 'INTERNAL') as BroodErrorCode, result.content);
  return result;
}

/** The entry point's outcome: 'ok' (what it made is released) or the BroodError it refused with. */
async function outcome(entry: Entry, input: object): Promise<'ok' | BroodError> {
  let made: unknown;
  try {
    made = await entry.call(input as never);
  } catch (error) {
    expect(error, `${entry.name} threw a raw ${String(error)}`).toBeInstanceOf(BroodError);
    return error as BroodError;
  }
  await release(made);
  return 'ok';
}

async function release(made: unknown): Promise<void> {
  if (made === agent) return; // resumeAgent of a live agent answers with it
  if (typeof made === 'function') (made as () => void)();
  const value = made as { close?: () => unknown; return?: () => unknown; dispose?: () => unknown } | null;
  if (typeof value?.close === 'function' && 'createAgent' in value) await value.close();
  if (typeof value?.return === 'function') await value.return();
  if (typeof value?.dispose === 'function') await value.dispose();
}

async function state(): Promise<unknown> {
  return {
    tools: brood.tools.view().names,
    agentTools: agent.tools.view().names,
    sections: brood.prompt.assemble().sections.map((s) => s.name),
    providers: brood.subagents.list(),
    sessions: (await brood.sessions.list()).length,
  };
}

beforeAll(async () => {
  brood = createBrood({ runner: 'inline' });
  brood.tools.register(
    defineTool({ name: 'alpha', description: 'alpha', parameters: { type: 'object' }, execute: () => 'a' }),
  );
  agent = await brood.createAgent({ model: route });
});
afterAll(async () => {
  await brood.close();
});

describe('an input that throws when read is refused with its entry point’s code', () => {
  for (const entry of ENTRIES) {
    it(`${entry.name} → ${entry.code}`, async () => {
      const modes: Mode[] = [
        { kind: 'traps' },
        { kind: 'revoked' },
        ...entry.keys.map((key) => ({ kind: 'getter' as const, key })),
      ];
      for (const mode of modes) {
        const before = await state();
        const result = await outcome(
          entry,
          hostile(entry.base(), mode, () => new Error('boom')),
        );
        expect(result === 'ok' ? 'ok' : result.code, `${entry.name}, ${JSON.stringify(mode)}`).toBe(entry.code);
        expect(await state()).toEqual(before);
      }
    });
  }
});

it('any trap, any thrown value: success or a BroodError, and a refusal leaves nothing behind', async () => {
  const thrown = fc.oneof(
    fc.constant(() => new Error('boom')),
    fc.string().map((s) => () => s),
    fc.constantFrom(null, undefined, 0, Symbol('thrown')).map((v) => () => v),
    fc.constant(() => unprintable),
  );
  const mode: fc.Arbitrary<Mode> = fc.oneof(
    fc.constant({ kind: 'traps' as const }),
    fc.constant({ kind: 'revoked' as const }),
    fc.constantFrom(...TRAPS).map((trap) => ({ kind: 'trap' as const, trap })),
    fc.string({ maxLength: 12 }).map((key) => ({ kind: 'getter' as const, key })),
  );
  let refusals = 0;
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...ENTRIES), mode, thrown, async (entry, how, value) => {
      const before = await state();
      const result = await outcome(entry, hostile(entry.base(), how, value));
      if (result === 'ok') return;
      refusals += 1;
      expect(typeof result.message).toBe('string');
      expect(await state()).toEqual(before);
    }),
    { numRuns: 300, seed: 0x31_06 },
  );
  expect(refusals).toBeGreaterThan(100);
});
