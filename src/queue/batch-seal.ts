/**
 * How a batch is written to a Redis list: `<mac>\n<payload>`, the payload being the JSON envelope.
 * With a secret, the mac is an HMAC-SHA256 over the destination and the payload (which holds the
 * sender, its epoch, the sequence number and the frames), so a batch can be neither forged nor
 * replayed to another endpoint by someone who can write to Redis but does not hold the secret. Without
 * one the mac is `-` and nothing is checked (Redis is trusted, as before).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const UNSIGNED = '-';

export interface BatchSeal {
  seal(to: string, payload: string): string;
  /** The payload of a body addressed to `self`, or undefined when its mac fails (only with a secret). */
  open(self: string, body: string): string | undefined;
}

export function batchSeal(secret: string | undefined): BatchSeal {
  const mac = (to: string, payload: string): string =>
    createHmac('sha256', secret as string)
      .update(to)
      .update('\n')
      .update(payload)
      .digest('base64');
  return {
    seal: (to, payload) => `${secret === undefined ? UNSIGNED : mac(to, payload)}\n${payload}`,
    open: (self, body) => {
      const cut = body.indexOf('\n');
      // A body without a mac line is a bare payload (a writer that predates sealing): unsigned.
      const [given, payload] = cut < 0 ? [UNSIGNED, body] : [body.slice(0, cut), body.slice(cut + 1)];
      if (secret === undefined) return payload;
      const expected = Buffer.from(mac(self, payload));
      const actual = Buffer.from(given);
      return actual.length === expected.length && timingSafeEqual(actual, expected) ? payload : undefined;
    },
  };
}
