/**
 * The client's fs methods (`fs/read_text_file`, `fs/write_text_file`), offered only when the provider
 * has `fs: { root }` and confined to that root: paths are resolved through symlinks (for a new file,
 * its nearest existing ancestor) before the check, so a link cannot lead outside. A refusal is a
 * JSON-RPC error to the agent, and every call is reported to the child's session.
 */
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import type * as Acp from '@agentclientprotocol/sdk';

export interface FsEvent {
  op: 'read' | 'write';
  path: string;
  ok: boolean;
  error?: string;
}

type AcpModule = typeof import('@agentclientprotocol/sdk');

/** Biggest file served to the agent in one read. */
const MAX_READ_BYTES = 8 * 1024 * 1024;

export function fsHandlers(root: string, acp: AcpModule) {
  const refuse = (message: string): Error => acp.RequestError.invalidParams(undefined, message);
  const run = async <T>(
    op: FsEvent['op'],
    path: string,
    report: (event: FsEvent) => void,
    work: () => Promise<T>,
  ): Promise<T> => {
    try {
      const value = await work();
      report({ op, path, ok: true });
      return value;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      report({ op, path, ok: false, error: message });
      throw refuse(message);
    }
  };
  return {
    read: (params: Acp.ReadTextFileRequest, report: (event: FsEvent) => void): Promise<Acp.ReadTextFileResponse> =>
      run('read', params.path, report, async () => {
        const file = await confined(root, params.path, false);
        const text = await readFile(file, 'utf8');
        if (Buffer.byteLength(text) > MAX_READ_BYTES)
          throw new Error(`${params.path} is larger than ${MAX_READ_BYTES} bytes`);
        return { content: sliceLines(text, params.line ?? undefined, params.limit ?? undefined) };
      }),
    write: (params: Acp.WriteTextFileRequest, report: (event: FsEvent) => void): Promise<Acp.WriteTextFileResponse> =>
      run('write', params.path, report, async () => {
        const file = await confined(root, params.path, true);
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, params.content, 'utf8');
        return {};
      }),
  };
}

/** The real path of `path` if it is inside `root`; ACP paths are absolute. */
async function confined(root: string, path: string, mayNotExist: boolean): Promise<string> {
  if (typeof path !== 'string' || !isAbsolute(path)) throw new Error(`path must be absolute: ${String(path)}`);
  const realRoot = await realpath(root);
  const target = mayNotExist
    ? await realpathOfNew(resolve(path))
    : await realpath(resolve(path)).catch(() => {
        throw new Error(`no such file: ${path}`);
      });
  const rel = relative(realRoot, target);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    throw new Error(`${path} is outside the allowed root`);
  return target;
}

/** A file that may not exist yet: resolve its nearest existing ancestor, then re-append the rest. */
async function realpathOfNew(path: string): Promise<string> {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      return resolve(await realpath(current), ...missing.reverse());
    } catch {
      const parent = dirname(current);
      if (parent === current) throw new Error(`no existing ancestor for ${path}`);
      missing.push(relative(parent, current));
      current = parent;
    }
  }
}

/** ACP `line` is 1-based; `limit` is a number of lines. */
function sliceLines(text: string, line: number | undefined, limit: number | undefined): string {
  if (line === undefined && limit === undefined) return text;
  const lines = text.split('\n');
  const start = Math.max(0, (line ?? 1) - 1);
  return lines.slice(start, limit === undefined ? undefined : start + Math.max(0, limit)).join('\n');
}
