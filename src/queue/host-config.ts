/**
 * `brood host --config <file.json>`: the adapter code this host may load, by provider id. A host
 * never loads code a config read from Redis names (host-models.ts); a parent's provider of a kind that
 * loads code runs on the hosts that list its id here.
 *
 *   { "models": [{ "kind": "module", "id": "custom", "moduleUrl": "./adapters/custom.mjs" }] }
 *
 * `moduleUrl` is an absolute URL or a path relative to the file. Keys are strict; every problem is one
 * INVALID_CONFIG naming the file and the key.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { BroodError, errorMessage } from '../errors.js';
import type { HostCodeProvider } from './host-models.js';

const moduleProvider = z.strictObject({
  kind: z.literal('module'),
  id: z.string().min(1),
  moduleUrl: z.string().min(1),
});

const hostConfigSchema = z.strictObject({
  models: z.array(z.discriminatedUnion('kind', [moduleProvider], { error: "must be 'module'" })),
});

export async function readHostConfig(file: string): Promise<HostCodeProvider[]> {
  const fail = (key: string, message: string): never => {
    throw new BroodError('INVALID_CONFIG', `brood host --config ${file}: ${key}: ${message}`, { details: { key } });
  };
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    return fail('(file)', `cannot be read as JSON (${errorMessage(error)})`);
  }
  const parsed = hostConfigSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return fail(issue?.path.join('.') || '(root)', issue?.message ?? 'invalid');
  }
  const base = dirname(resolve(file));
  const seen = new Set<string>();
  return parsed.data.models.map((provider, index) => {
    if (seen.has(provider.id)) fail(`models.${index}.id`, `provider id '${provider.id}' is listed twice`);
    seen.add(provider.id);
    const moduleUrl = URL.canParse(provider.moduleUrl)
      ? provider.moduleUrl
      : pathToFileURL(resolve(base, provider.moduleUrl)).href;
    if (moduleUrl.startsWith('file:') && !existsSync(fileURLToPath(moduleUrl)))
      fail(`models.${index}.moduleUrl`, `no such file: ${fileURLToPath(moduleUrl)}`);
    return { ...provider, moduleUrl };
  });
}
