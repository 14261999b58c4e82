/** W3C trace context formatting and parsing, and the server attributes of an adapter's base URL. */
import { describe, expect, it } from 'vitest';
import { traceHeadersOf } from '../../../src/telemetry/propagation.js';
import { serverOfURL } from '../../../src/telemetry/setup.js';

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const spanId = '00f067aa0ba902b7';

describe('traceHeadersOf', () => {
  it('formats traceparent with the sampled flag, and tracestate when the context has one', () => {
    expect(traceHeadersOf({ traceId, spanId, traceFlags: 1 })).toEqual({ traceparent: `00-${traceId}-${spanId}-01` });
    const traceState = { serialize: () => 'vendor=abc' } as never;
    expect(traceHeadersOf({ traceId, spanId, traceFlags: 0, traceState })).toEqual({
      traceparent: `00-${traceId}-${spanId}-00`,
      tracestate: 'vendor=abc',
    });
  });

  it('sends nothing for an invalid context (a non-recording span of the no-op tracer)', () => {
    expect(traceHeadersOf({ traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 })).toBeUndefined();
    expect(traceHeadersOf({ traceId: 'xyz', spanId, traceFlags: 1 })).toBeUndefined();
  });
});

describe('serverOfURL', () => {
  it("takes the host and the written port, or the scheme's", () => {
    expect(serverOfURL('http://127.0.0.1:8080/v1')).toEqual({ address: '127.0.0.1', port: 8080 });
    expect(serverOfURL('https://api.openai.com/v1')).toEqual({ address: 'api.openai.com', port: 443 });
    expect(serverOfURL('http://localhost')).toEqual({ address: 'localhost', port: 80 });
  });

  it('has no server for a provider without a base URL', () => {
    expect(serverOfURL(undefined)).toBeUndefined();
    expect(serverOfURL('not a url')).toBeUndefined();
  });
});
