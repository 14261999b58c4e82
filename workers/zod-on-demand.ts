// Stands in for `zod` where brood's own modules import it, inside the thread bundles (tsup.config.ts,
// `zodOnDemand`): zod's own bundle, dist/workers/zod.cjs (workers/zod.ts), is required on the first
// read of a property of `z`. Schemas are built on first use too (src/util/lazy.ts), so a pool thread that
// never words a rejection never loads zod. brood's sources import only `z` from zod; another name
// fails the thread build (the shim does not export it).
import type * as Zod from 'zod';

type Namespace = typeof Zod.z;

let real: Namespace | undefined;
const zod = (): Namespace => {
  real ??= (require('./zod.cjs') as typeof Zod).z;
  return real;
};

export const z: Namespace = new Proxy({} as Namespace, {
  get: (_target, key) => Reflect.get(zod(), key),
  has: (_target, key) => Reflect.has(zod(), key),
});
