/**
 * Who may talk to `brood mcp --http`, checked on every request before anything else reads it. A web
 * page the user visits can send requests to a loopback port, and through DNS rebinding (its own host
 * name re-pointed at 127.0.0.1) can even read the answers. So, as MCP's Streamable HTTP transport
 * requires: the `Host` header must name the server as it is bound (the bound address, `localhost`,
 * `127.0.0.1` or `[::1]`, with the port; plus any host the operator allows), and an `Origin` header,
 * when present, must be a loopback origin or one the operator allows (403 otherwise). With a token,
 * a request must also carry `Authorization: Bearer <token>` (401 otherwise), compared in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export interface HttpAccessOptions {
  /** The address the server is bound to. */
  host: string;
  port: number;
  /** More `Host` names (without a port) to accept, e.g. a LAN name when bound to 0.0.0.0. */
  allowedHosts?: readonly string[];
  /** More origins (`scheme://host[:port]`) to accept besides loopback ones. */
  allowedOrigins?: readonly string[];
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string;
}

export interface Refusal {
  status: 401 | 403;
  message: string;
  headers?: Record<string, string>;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** The request's check: undefined when it may go on, else how to refuse it. */
export type HttpGuard = (req: IncomingMessage) => Refusal | undefined;

export function httpGuard(options: HttpAccessOptions): HttpGuard {
  const hosts = allowedHostHeaders(options);
  const origins = new Set((options.allowedOrigins ?? []).map((origin) => new URL(origin).origin));
  const token = options.token === undefined ? undefined : digest(options.token);
  return (req) => {
    const host = req.headers.host?.toLowerCase();
    if (host === undefined || !hosts.has(host)) {
      return { status: 403, message: `Forbidden: Host '${host ?? ''}' is not this server` };
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin, origins)) {
      return { status: 403, message: `Forbidden: Origin '${origin}' is not allowed` };
    }
    if (token !== undefined && !bearerMatches(req.headers.authorization, token)) {
      return {
        status: 401,
        message: 'Unauthorized: a bearer token is required',
        headers: { 'www-authenticate': 'Bearer' },
      };
    }
    return undefined;
  };
}

/** Whether `host` (a bind address) is a loopback address: only local processes can reach it. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(bare);
}

/** Whether `text` is an origin (`http(s)://host[:port]`, nothing after it). */
export function isOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text.replace(/\/$/, '');
  } catch {
    return false;
  }
}

function allowedHostHeaders(options: HttpAccessOptions): Set<string> {
  const bound = options.host.includes(':') ? `[${options.host}]` : options.host;
  const names = [bound, ...LOOPBACK_NAMES, ...(options.allowedHosts ?? [])].map((name) => name.toLowerCase());
  const headers = new Set(names.map((name) => `${name}:${options.port}`));
  // A client leaves the port out of Host when it is the scheme's default.
  if (options.port === 80) for (const name of names) headers.add(name);
  return headers;
}

function originAllowed(origin: string, allowed: ReadonlySet<string>): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null" (a sandboxed or opaque origin) and anything unparsable
  }
  if (allowed.has(url.origin)) return true;
  return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_NAMES.includes(url.hostname);
}

/** Digests first: timingSafeEqual needs equal lengths, and comparing digests leaks nothing about the length. */
function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? '');
  const given = digest(match?.[1] ?? '');
  return timingSafeEqual(given, expected) && match !== null;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
