/** `acpProvider(options)`: the options, validated once at construction (INVALID_CONFIG names the key). */
import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { parseConfig } from '../../config.js';
import { DEFAULTS } from '../../defaults.js';

/** What a permission policy function is shown: the agent's request, as ACP sent it. */
export interface AcpPermissionRequest {
  /** The brood child (session id) whose ACP session asked. */
  childId: string;
  sessionId: string;
  toolCall: { toolCallId: string; title?: string | null; kind?: string | null; rawInput?: unknown };
  options: { optionId: string; name: string; kind: string }[];
}

export type AcpPermissionPolicy = 'deny' | 'allow' | ((request: AcpPermissionRequest) => Promise<'allow' | 'deny'>);

export interface AcpProviderOptions {
  /** The provider's registered name (default 'acp'). */
  name?: string;
  /** The agent executable, e.g. 'node' or an installed ACP agent's bin. */
  command: string;
  args?: string[];
  /** Added to this process's environment. */
  env?: Record<string, string>;
  /** The agent process's working directory, and the `cwd` of every ACP session (default: process.cwd()). */
  cwd?: string;
  /** How `session/request_permission` is answered (default 'deny'); every decision is logged in the child's session. */
  permissions?: AcpPermissionPolicy;
  /** Answer fs/read_text_file and fs/write_text_file, confined to root; absent → not offered. */
  fs?: { root: string };
  /** Bounds `initialize` and `session/new` (default 60 s). */
  timeoutMs?: number;
}

export interface ResolvedAcpOptions {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  permissions: AcpPermissionPolicy;
  fsRoot: string | undefined;
  timeoutMs: number;
}

const absolutePath = z.string().min(1).refine(isAbsolute, 'must be an absolute path');

const optionsSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must match ^[a-zA-Z0-9_-]{1,64}$')
    .optional(),
  command: z.string().min(1, 'must be a non-empty string'),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: absolutePath.optional(),
  permissions: z
    .union([
      z.literal('deny'),
      z.literal('allow'),
      z.custom<(request: AcpPermissionRequest) => Promise<'allow' | 'deny'>>(
        (value) => typeof value === 'function',
        'must be a function',
      ),
    ])
    .optional(),
  fs: z.strictObject({ root: absolutePath }).optional(),
  timeoutMs: z.number().int().positive().max(2_147_483_647).optional(),
});

export function resolveAcpOptions(options: AcpProviderOptions): ResolvedAcpOptions {
  const parsed = parseConfig(optionsSchema, options, 'acpProvider options');
  return {
    name: parsed.name ?? 'acp',
    command: parsed.command,
    args: parsed.args ?? [],
    env: parsed.env ?? {},
    cwd: parsed.cwd ?? process.cwd(),
    permissions: (parsed.permissions as AcpPermissionPolicy | undefined) ?? 'deny',
    fsRoot: parsed.fs?.root,
    timeoutMs: parsed.timeoutMs ?? DEFAULTS.acpTimeoutMs,
  };
}
