// Stands in for `zod` where brood's own modules import it, inside the thread bundles (tsup.config.ts,
// `zodOnDemand`). Evaluating zod's modules was the largest part of a pool thread's boot (~23 ms of CPU
// without the code cache), yet a thread needs zod only to word a rejection or on a rare path. The
// `require()` below makes esbuild wrap zod in a lazy initializer, run on the first read of a property
// of `z`. Schemas are built on first use too (src/lazy.ts). brood's sources import only `z` from zod.
import type * as Zod from 'zod';

type Namespace = typeof Zod.z;

let real: Namespace | undefined;
const zod = (): Namespace => {
  real ??= (require('zod') as typeof Zod).z;
  return real;
};

export const z: Namespace = new Proxy({} as Namespace, {
  get: (_target, key) => Reflect.get(zod(), key),
  has: (_target, key) => Reflect.has(zod(), key),
});
