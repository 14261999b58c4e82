/**
 * Tool names for MCP tools: `mcp__<server>__<tool>` (the convention Claude Code uses). Providers
 * accept `[A-Za-z0-9_-]{1,64}`, so other characters become `_`, and a name past 64 characters keeps
 * its first characters plus `_` and 8 hex digits of the SHA-256 of the server's original tool name:
 * stable across runs and restarts, and distinct for tools that only differ past the cut. The server
 * is always called with its original name.
 */
import { createHash } from 'node:crypto';

export const MAX_TOOL_NAME = 64;
const HASH_LENGTH = 8;

export function mcpToolName(server: string, tool: string): string {
  const prefix = `mcp__${server}__`;
  const full = prefix + tool.replace(/[^A-Za-z0-9_-]/g, '_');
  if (full.length <= MAX_TOOL_NAME) return full;
  const hash = createHash('sha256').update(tool).digest('hex').slice(0, HASH_LENGTH);
  return `${full.slice(0, MAX_TOOL_NAME - HASH_LENGTH - 1)}_${hash}`;
}
