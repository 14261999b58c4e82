/** The safety rules of `brood run`'s built-in tools, in process. */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinTools, confine, loopbackURL } from '../../../src/cli/builtin-tools.js';

let base: string;
let root: string;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'brood-tools-'));
  root = join(base, 'root');
  await mkdir(join(root, 'sub'), { recursive: true });
  await writeFile(join(root, 'sub', 'a.txt'), 'inside');
  await writeFile(join(base, 'secret.txt'), 'outside');
  await symlink(join(base, 'secret.txt'), join(root, 'link.txt'));
});

afterAll(() => rm(base, { recursive: true, force: true }));

describe('confine', () => {
  it('allows paths inside the root and refuses .., absolute paths and symlinks that leave it', async () => {
    expect(await confine(root, 'sub/a.txt')).toMatch(/sub[/\\]a\.txt$/);
    await expect(confine(root, '../secret.txt')).rejects.toThrow(/outside the allowed root/);
    await expect(confine(root, join(base, 'secret.txt'))).rejects.toThrow(/outside the allowed root/);
    await expect(confine(root, 'link.txt')).rejects.toThrow(/outside the allowed root/);
    await expect(confine(root, 'missing.txt')).rejects.toThrow(/no such file/);
  });
});

describe('loopbackURL', () => {
  it.each(['http://localhost:8080/x', 'http://127.0.0.1/', 'https://[::1]:3000/'])('accepts %s', (url) => {
    expect(loopbackURL(url).href).toBeTruthy();
  });
  it.each(['http://example.com/', 'http://127.0.0.2/', 'file:///etc/passwd', 'http://localhost.evil.com/', 'nonsense'])(
    'refuses %s',
    (url) => {
      expect(() => loopbackURL(url)).toThrow();
    },
  );
});

describe('tools', () => {
  it('read_file and list_dir work inside the root', async () => {
    const [readFile, listDir] = builtinTools(['read_file', 'list_dir'], root);
    const ctx = { callId: 'c1', agent: undefined, signal: new AbortController().signal };
    expect(await readFile!.execute({ path: 'sub/a.txt' }, ctx)).toBe('inside');
    expect(await listDir!.execute({}, ctx)).toBe('link.txt\nsub/');
  });
});
