import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadAdapter } from '../../../src/models/index.js';
import type { ModelProviderConfig } from '../../../src/models/types.js';
import { expectCode } from '../../support/codes.js';
import { makeRequest, user } from './helpers.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'brood-adapters-'));
  await writeFile(
    join(dir, 'good.mjs'),
    `export function createAdapter(config) {
       return { async request(req) { return { text: config.options.greeting + ' ' + req.messages[0].text, toolCalls: [], finish: 'stop', usage: { inputTokens: 1, outputTokens: 1 } }; } };
     }`,
  );
  await writeFile(join(dir, 'none.mjs'), 'export const nothing = 1;');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const moduleConfig = (file: string | undefined): ModelProviderConfig => ({
  kind: 'module',
  id: 'm',
  name: 'm',
  models: [],
  acceptsUnlistedModels: true,
  options: { greeting: 'hi' },
  ...(file === undefined ? {} : { moduleUrl: pathToFileURL(join(dir, file)).href }),
});

it('loads a module adapter by URL with its config', async () => {
  const adapter = await loadAdapter(moduleConfig('good.mjs'));
  expect((await adapter.request(makeRequest([user('there')]))).text).toBe('hi there');
});

it('rejects broken module configs with INVALID_CONFIG', async () => {
  await expectCode(loadAdapter(moduleConfig(undefined)), 'INVALID_CONFIG');
  await expectCode(loadAdapter(moduleConfig('none.mjs')), 'INVALID_CONFIG');
  await expectCode(loadAdapter(moduleConfig('missing.mjs')), 'INVALID_CONFIG');
  await expectCode(loadAdapter({ ...moduleConfig(undefined), kind: 'carrier-pigeon' as never }), 'INVALID_CONFIG');
});
