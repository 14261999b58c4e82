/**
 * `apiKeyEnv` names a variable that must be set where requests are sent: creating an agent on a provider
 * whose variable is unset is INVALID_CONFIG naming it, and a 401/403 names the variable the key came from.
 * Real loopback HTTP for the adapter; variables are unique to this file and removed after each test.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { anthropicCompatible, type Brood, createBrood, openAICompatible } from '../../../src/index.js';
import { loadAdapter } from '../../../src/models/index.js';
import { expectCode } from '../../support/codes.js';
import { makeRequest, user } from './helpers.js';
import { type Loopback, startLoopback, status } from './loopback.js';

const UNSET = 'BROOD_TEST_KEY_NEVER_SET';
const SET = 'BROOD_TEST_KEY_SET';

let server: Loopback;
let brood: Brood | undefined;
beforeAll(async () => {
  server = await startLoopback();
});
afterAll(() => server.close());
afterEach(async () => {
  server.reset();
  delete process.env[SET];
  await brood?.close();
  brood = undefined;
});

function runtime(): Brood {
  brood = createBrood({
    runner: 'inline',
    models: [
      openAICompatible({ id: 'unkeyed', baseURL: `${server.base}/v1`, apiKeyEnv: UNSET, models: ['m'] }),
      anthropicCompatible({ id: 'keyed', baseURL: server.base, apiKeyEnv: SET, models: [{ id: 'm', maxTokens: 64 }] }),
      openAICompatible({ id: 'inline', baseURL: `${server.base}/v1`, apiKey: 'sk-inline', models: ['m'] }),
    ],
  });
  return brood;
}

describe('createAgent on a provider whose apiKeyEnv is unset', () => {
  it('is INVALID_CONFIG naming the variable; nothing is created', async () => {
    const b = runtime();
    const refusal = await expectCode(
      b.createAgent({ id: 'a', model: { provider: 'unkeyed', model: 'm' } }),
      'INVALID_CONFIG',
    );
    expect(refusal.message).toContain(UNSET);
    expect(refusal.details).toMatchObject({ provider: 'unkeyed', apiKeyEnv: UNSET });
    expect(await b.sessions.list()).toEqual([]);
  });

  it('does not stop createBrood or agents on other providers (set variable, inline key)', async () => {
    const b = runtime();
    await expectCode(b.createAgent({ model: { provider: 'keyed', model: 'm' } }), 'INVALID_CONFIG');
    process.env[SET] = 'sk-set';
    await expect(b.createAgent({ model: { provider: 'keyed', model: 'm' } })).resolves.toBeDefined();
    await expect(b.createAgent({ model: { provider: 'inline', model: 'm' } })).resolves.toBeDefined();
  });
});

describe('a 401/403 from a provider keyed by apiKeyEnv', () => {
  const ask = async (options: { apiKey?: string; apiKeyEnv?: string }) => {
    const adapter = await loadAdapter(
      openAICompatible({ id: 'oa', baseURL: `${server.base}/v1`, models: ['m'], retry: { retries: 0 }, ...options }),
    );
    return (await adapter.request(makeRequest([user('q')]))).diagnostic;
  };

  it('names the variable, and says when it is not set', async () => {
    server.push(
      status(401, JSON.stringify({ error: 'Incorrect API key provided' })),
      status(403, JSON.stringify({ error: 'forbidden' })),
    );
    expect(await ask({ apiKeyEnv: UNSET })).toBe(
      `HTTP 401 Unauthorized: Incorrect API key provided (the API key is read from environment variable ${UNSET}, which is not set)`,
    );
    process.env[SET] = 'sk-wrong';
    expect(await ask({ apiKeyEnv: SET })).toBe(
      `HTTP 403 Forbidden: forbidden (the API key is read from environment variable ${SET})`,
    );
  });

  it('leaves other statuses and inline keys as the server said', async () => {
    server.push(status(400, JSON.stringify({ error: 'bad' })), status(401, JSON.stringify({ error: 'nope' })));
    expect(await ask({ apiKeyEnv: UNSET })).toBe('HTTP 400 Bad Request: bad');
    expect(await ask({ apiKey: 'sk-inline' })).toBe('HTTP 401 Unauthorized: nope');
  });
});
