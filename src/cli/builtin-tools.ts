/**
 * The small, deliberately safe tool set `brood run` offers: read-only file access confined to one root
 * directory (symlinks resolved before the check, so a link cannot point outside), and HTTP GET to the
 * loopback interface only (no redirects followed, so a local server cannot bounce the agent outward).
 * Outputs are capped so one call cannot flood the context window.
 */
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../index.js';
import { ToolAnswerError } from '../tools/thrown.js';
import type { BuiltinToolName } from './run-config.js';

const MAX_FILE_BYTES = 256 * 1024;
const MAX_HTTP_BYTES = 64 * 1024;
const MAX_DIR_ENTRIES = 500;
const HTTP_TIMEOUT_MS = 10_000;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export function builtinTools(names: readonly BuiltinToolName[], root: string): ToolDefinition[] {
  const factories: Record<BuiltinToolName, () => ToolDefinition> = {
    read_file: () => readFileTool(root),
    list_dir: () => listDirTool(root),
    http_get: () => httpGetTool(),
  };
  return [...new Set(names)].map((name) => factories[name]());
}

/** Resolves `path` under `root` and refuses anything whose real location is outside it. */
export async function confine(root: string, path: string): Promise<string> {
  const realRoot = await realpath(root);
  const target = await realpath(resolve(realRoot, path)).catch(() => {
    throw new ToolAnswerError(`no such file or directory: ${path}`);
  });
  const rel = relative(realRoot, target);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    throw new ToolAnswerError(`${path} is outside the allowed root`);
  return target;
}

function readFileTool(root: string): ToolDefinition {
  return defineTool({
    name: 'read_file',
    description: `Read a UTF-8 text file. Paths are relative to the workspace root; at most ${MAX_FILE_BYTES / 1024} KiB are returned.`,
    parameters: z.object({ path: z.string().describe('file path relative to the workspace root') }),
    concurrencySafe: true,
    async execute({ path }) {
      const file = await confine(root, path);
      if (!(await stat(file)).isFile()) throw new ToolAnswerError(`${path} is not a regular file`);
      const handle = await open(file, 'r');
      try {
        const buffer = Buffer.alloc(MAX_FILE_BYTES + 1);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
        const text = buffer.subarray(0, Math.min(bytesRead, MAX_FILE_BYTES)).toString('utf8');
        return bytesRead > MAX_FILE_BYTES ? `${text}\n[truncated at ${MAX_FILE_BYTES} bytes]` : text;
      } finally {
        await handle.close();
      }
    },
  });
}

function listDirTool(root: string): ToolDefinition {
  return defineTool({
    name: 'list_dir',
    description: 'List a directory under the workspace root; directories end with "/".',
    parameters: z.object({
      path: z.string().optional().describe('directory relative to the workspace root; default "."'),
    }),
    concurrencySafe: true,
    async execute({ path }) {
      const dir = await confine(root, path ?? '.');
      const entries = await readdir(dir, { withFileTypes: true });
      const names = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
      const shown = names.slice(0, MAX_DIR_ENTRIES);
      if (names.length > shown.length) shown.push(`[${names.length - shown.length} more entries not shown]`);
      return shown.length === 0 ? '(empty directory)' : shown.join('\n');
    },
  });
}

function httpGetTool(): ToolDefinition {
  return defineTool({
    name: 'http_get',
    description:
      'HTTP GET a URL on this machine (localhost / 127.0.0.1 / [::1] only). Returns the status line and the body.',
    parameters: z.object({ url: z.string().describe('an http(s) URL on localhost') }),
    concurrencySafe: true,
    async execute({ url }, ctx) {
      const target = loopbackURL(url);
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(HTTP_TIMEOUT_MS)]);
      const response = await fetch(target, { redirect: 'manual', signal });
      const location = response.headers.get('location');
      const body = await readCapped(response, MAX_HTTP_BYTES);
      const status = `HTTP ${response.status}${location === null ? '' : ` (redirect to ${location}, not followed)`}`;
      return `${status}\n${body}`;
    },
  });
}

export function loopbackURL(text: string): URL {
  if (!URL.canParse(text)) throw new ToolAnswerError(`not a URL: ${text}`);
  const url = new URL(text);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ToolAnswerError(`only http(s) URLs are allowed, not ${url.protocol}`);
  if (!LOOPBACK_HOSTS.has(url.hostname))
    throw new ToolAnswerError(`http_get only reaches localhost, not ${url.hostname}`);
  return url;
}

async function readCapped(response: Response, limit: number): Promise<string> {
  if (response.body === null) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    chunks.push(Buffer.from(chunk as Uint8Array));
    size += (chunk as Uint8Array).length;
    if (size > limit) break; // leaving the loop cancels the rest of the body
  }
  const text = Buffer.concat(chunks).subarray(0, limit).toString('utf8');
  return size > limit ? `${text}\n[truncated at ${limit} bytes]` : text;
}
