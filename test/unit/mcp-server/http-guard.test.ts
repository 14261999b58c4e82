/**
 * The pure parts of `brood mcp --http`'s request check: which bind addresses are loopback (off
 * loopback a token is required), what counts as an origin for --allowed-origin, and the Host, Origin
 * and bearer verdicts on requests made of headers alone.
 */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { httpGuard, isLoopbackHost, isOrigin } from '../../../src/mcp/server/http-guard.js';

const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('the HTTP guard', () => {
  it('knows loopback bind addresses', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ['0.0.0.0', '::', '192.168.1.5', 'example.com', '128.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });

  it('takes only a bare http(s) origin for --allowed-origin', () => {
    expect(isOrigin('https://app.example')).toBe(true);
    expect(isOrigin('http://localhost:3000')).toBe(true);
    expect(isOrigin('https://app.example/path')).toBe(false);
    expect(isOrigin('file:///tmp')).toBe(false);
    expect(isOrigin('app.example')).toBe(false);
  });

  it('checks Host with the port, Origin when sent, and the bearer token', () => {
    const guard = httpGuard({ host: '0.0.0.0', port: 8765, allowedHosts: ['box.lan'], token: 'tok' });
    const ok = { host: 'box.lan:8765', authorization: 'Bearer tok' };
    expect(guard(request(ok))).toBeUndefined();
    expect(guard(request({ ...ok, host: '0.0.0.0:8765' }))).toBeUndefined();
    expect(guard(request({ ...ok, host: 'LOCALHOST:8765', origin: 'http://[::1]:9' }))).toBeUndefined();
    expect(guard(request({ ...ok, host: 'box.lan' }))?.status).toBe(403);
    expect(guard(request({ authorization: 'Bearer tok' }))?.status).toBe(403);
    expect(guard(request({ ...ok, origin: 'http://box.lan:8765' }))?.status).toBe(403);
    expect(guard(request({ ...ok, authorization: 'Bearer tok2' }))?.status).toBe(401);
    expect(guard(request({ ...ok, authorization: 'bearer tok' }))).toBeUndefined();
    expect(guard(request({ host: ok.host }))).toMatchObject({ status: 401, headers: { 'www-authenticate': 'Bearer' } });
  });
});
