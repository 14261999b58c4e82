/**
 * A runtime whose scripted model runs one named run_code program per agent turn, with tools that
 * record what they received, so the sandbox suites can assert what reached the host.
 */

import type { Agent, Brood, BroodOptions } from '../../../src/index.js';
import { createBrood, defineTool, scriptedModels } from '../../../src/index.js';
import { ofType } from '../../support/events.js';
import { route } from '../../support/route.js';
import { tapStore } from '../../support/tap-store.js';
import { expectWellFormed } from '../../support/well-formed.js';

export interface ProgramResult {
  isError: boolean;
  content: string;
  errorCode?: string;
}

export interface Harness {
  brood: Brood;
  /** Arguments every tool body received, in order (as the host saw them). */
  received: { name: string; args: unknown }[];
  /** The object `lookup` returned last, kept by the host after the program got its JSON copy. */
  lastLookupResult(): unknown;
  /** Runs program `name` as a run_code call in a fresh agent; resolves with that call's tool result. */
  run(name: string, agent?: Agent): Promise<ProgramResult & { agent: Agent }>;
  newAgent(): Promise<Agent>;
}

const tag = (name: string) => `«program ${name}»`;

export function sandboxHarness(programs: Record<string, string>, options: Partial<BroodOptions> = {}): Harness {
  const scripts = Object.entries(programs).map(([name, code]) => ({
    match: tag(name),
    turns: [{ toolCalls: [{ name: 'run_code', arguments: { description: name, code } }] }, { text: `done ${name}` }],
  }));
  const tap = tapStore();
  const brood = createBrood({
    sessions: tap.store,
    codeMode: 'code',
    models: [scriptedModels({ id: 'scripted', scripts })],
    pool: { threads: 1, hangTimeoutMs: 6_000, cancelGraceMs: 300 },
    codeBusyTimeoutMs: 1_000,
    codeWallTimeoutMs: 20_000,
    ...options,
  });
  const received: Harness['received'] = [];
  let lookupResult: unknown;
  brood.tools.register(
    defineTool({
      name: 'lookup',
      description: 'doubles n',
      parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      execute: (args: { n: number }) => {
        received.push({ name: 'lookup', args });
        lookupResult = { n: args.n * 2, tags: ['a', 'b'], nested: { ok: true } };
        return lookupResult;
      },
    }),
  );
  brood.tools.register(
    defineTool({
      name: 'echo',
      description: 'returns its arguments',
      parameters: { type: 'object', properties: {}, additionalProperties: true },
      execute: (args: Record<string, unknown>) => {
        received.push({ name: 'echo', args });
        return args;
      },
    }),
  );
  const newAgent = () => brood.createAgent({ model: route });
  return {
    brood,
    received,
    lastLookupResult: () => lookupResult,
    newAgent,
    async run(name, given) {
      const agent = given ?? (await newAgent());
      const before = ofType((await brood.sessions.read(agent.id)).events, 'tool/result').length;
      const turn = await agent.run(`please run ${tag(name)}`);
      if (turn.stopReason !== 'completed')
        throw new Error(`turn of ${name} ended ${turn.stopReason}: ${turn.diagnostic ?? ''}`);
      const results = ofType(await expectWellFormed(brood.sessions, agent.id), 'tool/result').slice(before);
      if (results.length !== 1) throw new Error(`expected one run_code result for ${name}, got ${results.length}`);
      const data = results[0]!.data as { isError: boolean; content: string; errorCode?: string };
      return {
        agent,
        isError: data.isError,
        content: data.content,
        ...(data.errorCode === undefined ? {} : { errorCode: data.errorCode }),
      };
    },
  };
}
