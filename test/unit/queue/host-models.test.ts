/**
 * Which provider configs a host's pool gets for configs read from Redis (no Redis needed): data from
 * the parent, code only from the host's own configuration — for `module` and for any other kind that
 * is not one of brood's built-in adapters, whatever field it names its code in. And the host's
 * `--config` file: strict, paths relative to the file, a module that is not there refused at start.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { ModelProviderConfig } from '../../../src/models/types.js';
import { readHostConfig } from '../../../src/queue/host-config.js';
import { hostModels, unconfiguredProvider } from '../../../src/queue/host-models.js';
import { expectCode } from '../../support/codes.js';

const FORGED_URL = 'data:text/javascript,export const createAdapter = () => null';

function config(fields: Record<string, unknown>): ModelProviderConfig {
  return {
    name: String(fields.id),
    models: [],
    acceptsUnlistedModels: true,
    options: { greeting: 'from the parent' },
    ...fields,
  } as unknown as ModelProviderConfig;
}

describe('the configs a host runs for configs read from Redis', () => {
  it("a module provider the host lists: the parent's data with the host's moduleUrl", () => {
    const { models, unconfigured } = hostModels(
      [config({ kind: 'module', id: 'custom', moduleUrl: FORGED_URL })],
      [{ kind: 'module', id: 'custom', moduleUrl: 'file:///srv/adapters/custom.mjs' }],
    );
    expect(models).toEqual([config({ kind: 'module', id: 'custom', moduleUrl: 'file:///srv/adapters/custom.mjs' })]);
    expect(unconfigured.size).toBe(0);
  });

  it('a provider of any non-built-in kind the host does not list (or lists as another kind): left out, its activations refused', () => {
    const read = [
      config({ kind: 'module', id: 'custom', moduleUrl: FORGED_URL }),
      config({ kind: 'ai-sdk', id: 'sdk', module: FORGED_URL }),
      config({ kind: 'something-new', id: 'novel', loader: FORGED_URL }),
    ];
    const models = hostModels(read, [{ kind: 'module', id: 'sdk', moduleUrl: 'file:///srv/adapters/sdk.mjs' }]);
    expect(models.models).toEqual([]);
    for (const provider of ['custom', 'sdk', 'novel'])
      expect(unconfiguredProvider(models, provider)?.code).toBe('INVALID_CONFIG');
  });

  it("a listed provider of another code-loading kind takes its code field from the host's entry", () => {
    const { models } = hostModels(
      [config({ kind: 'ai-sdk', id: 'sdk', module: FORGED_URL })],
      [{ kind: 'ai-sdk', id: 'sdk', module: 'file:///srv/adapters/sdk.mjs' }],
    );
    expect(models).toEqual([config({ kind: 'ai-sdk', id: 'sdk', module: 'file:///srv/adapters/sdk.mjs' })]);
  });

  it('a built-in kind keeps its data and loses any other field', () => {
    const { models } = hostModels([config({ kind: 'scripted', id: 'scripted', moduleUrl: FORGED_URL })], []);
    expect(models).toEqual([config({ kind: 'scripted', id: 'scripted' })]);
    expect(unconfiguredProvider({ models, unconfigured: new Map() }, 'scripted')).toBeUndefined();
  });
});

describe('brood host --config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'brood-host-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, content: unknown): string => {
    const file = join(dir, name);
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
    return file;
  };
  writeFileSync(join(dir, 'adapter.mjs'), 'export function createAdapter() {}');

  it('resolves a moduleUrl path against the file', async () => {
    const file = write('ok.json', { models: [{ kind: 'module', id: 'custom', moduleUrl: './adapter.mjs' }] });
    expect(await readHostConfig(file)).toEqual([
      { kind: 'module', id: 'custom', moduleUrl: pathToFileURL(join(dir, 'adapter.mjs')).href },
    ]);
  });

  it.each([
    ['not JSON', '{', '(file)'],
    ['an unknown key', { models: [], extra: 1 }, '(root)'],
    ['an unknown kind', { models: [{ kind: 'scripted', id: 'x', moduleUrl: './adapter.mjs' }] }, 'models.0.kind'],
    [
      'a module that is not there',
      { models: [{ kind: 'module', id: 'x', moduleUrl: './gone.mjs' }] },
      'models.0.moduleUrl',
    ],
    [
      'an id listed twice',
      {
        models: [
          { kind: 'module', id: 'x', moduleUrl: './adapter.mjs' },
          { kind: 'module', id: 'x', moduleUrl: './adapter.mjs' },
        ],
      },
      'models.1.id',
    ],
  ])('refuses %s: INVALID_CONFIG naming the key', async (name, content, key) => {
    const file = write(`${name.replaceAll(' ', '-')}.json`, content);
    const error = await expectCode(readHostConfig(file), 'INVALID_CONFIG');
    expect(error.details).toMatchObject({ key });
  });
});
