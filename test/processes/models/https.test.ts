/**
 * The HTTP adapters over TLS, from a process of their own (so the test decides which CAs it trusts):
 * a server whose certificate the process trusts answers, both requests over one TLS connection; one
 * it does not trust is a network error, not an answer.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runNode } from '../../support/run-cli.js';

const INDEX = fileURLToPath(new URL('../../../dist/index.js', import.meta.url));
const CLIENT = fileURLToPath(new URL('./fixtures/tls-client.mjs', import.meta.url));
const CERT = fileURLToPath(new URL('./fixtures/tls-cert.pem', import.meta.url));
const KEY = fileURLToPath(new URL('./fixtures/tls-key.pem', import.meta.url));

interface Ended {
  stopReason: string;
  output: string;
  diagnostic?: string;
}

let server: Server;
let baseURL: string;
let handshakes = 0;

beforeAll(async () => {
  server = createServer({ key: readFileSync(KEY), cert: readFileSync(CERT) }, (req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = { choices: [{ index: 0, delta: { content: 'over tls' }, finish_reason: 'stop' }] };
      res.end(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`);
    });
  });
  server.on('secureConnection', () => {
    handshakes += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `https://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** The client's two requests, trusting CERT on top of Node's CAs or not (undefined removes the variable). */
async function runClient(extraCaCerts: string | undefined): Promise<Ended[]> {
  const { code, stdout, stderr } = await runNode([CLIENT, INDEX, baseURL], {
    env: { NODE_EXTRA_CA_CERTS: extraCaCerts },
  });
  expect(code, stderr).toBe(0);
  return JSON.parse(stdout) as Ended[];
}

it('a trusted certificate: both requests answered, over one TLS connection', async () => {
  handshakes = 0;
  const ended = await runClient(CERT);
  expect(ended).toEqual([
    { stopReason: 'completed', output: 'over tls' },
    { stopReason: 'completed', output: 'over tls' },
  ]);
  expect(handshakes).toBe(1);
});

it('a certificate the process does not trust: each request ends error with a network-error diagnostic', async () => {
  const ended = await runClient(undefined);
  expect(ended.map((e) => e.stopReason)).toEqual(['error', 'error']);
  for (const e of ended) expect(e.diagnostic).toMatch(/^network error: /);
});
