/**
 * A suite against both wire formats: a Chat Completions and an Anthropic Messages loopback server
 * (started once, reset after each test) and a runtime with a provider for each (closed after each
 * test). Drivers run in pool threads, which load the built driver.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Brood, BroodOptions } from '../../src/index.js';
import { anthropicCompatible, createBrood, openAICompatible } from '../../src/index.js';
import { type Loopback, startLoopback } from '../unit/models/loopback.js';
import { assertBuilt } from './run-cli.js';

export const OA = { provider: 'oa', model: 'gpt-x' };
export const AN = { provider: 'an', model: 'claude-x' };

export type WireMessage = { role: string; content: unknown };

/** The messages of the `index`-th request a server saw. */
export const messagesOf = (seen: Loopback['seen'], index: number) => seen[index]?.body.messages as WireMessage[];

export interface TwoFormats {
  readonly openai: Loopback;
  readonly anthropic: Loopback;
  /** The runtime of this test (the last one made): both providers, one pool thread. */
  readonly brood: Brood | undefined;
  makeBrood(options?: BroodOptions): Brood;
}

export function twoFormats(): TwoFormats {
  let openai: Loopback | undefined;
  let anthropic: Loopback | undefined;
  let brood: Brood | undefined;
  beforeAll(async () => {
    assertBuilt();
    [openai, anthropic] = await Promise.all([startLoopback(), startLoopback()]);
  });
  afterAll(async () => {
    await Promise.all([openai?.close(), anthropic?.close()]);
  });
  afterEach(async () => {
    await brood?.close();
    brood = undefined;
    openai?.reset();
    anthropic?.reset();
  });
  const started = (server: Loopback | undefined): Loopback => {
    if (server === undefined) throw new Error('the loopback servers start in beforeAll');
    return server;
  };
  return {
    get openai() {
      return started(openai);
    },
    get anthropic() {
      return started(anthropic);
    },
    get brood() {
      return brood;
    },
    makeBrood(options: BroodOptions = {}): Brood {
      brood = createBrood({
        pool: { threads: 1 },
        models: [
          openAICompatible({
            id: 'oa',
            baseURL: `${started(openai).base}/v1`,
            models: ['gpt-x'],
            retry: { retries: 0 },
          }),
          anthropicCompatible({
            id: 'an',
            baseURL: started(anthropic).base,
            apiKey: 'sk-ant-test',
            models: ['claude-x'],
            retry: { retries: 0 },
          }),
        ],
        ...options,
      });
      return brood;
    },
  };
}
