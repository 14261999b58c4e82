/**
 * A value built on first use, then kept. Modules that run in pool threads build their zod schemas
 * through it: a schema at module top level would make every thread evaluate zod while it boots,
 * although a thread needs one only to word a rejection or on a rare path. The thread bundles load
 * zod itself on first use too (tsup.config.ts, `zodOnDemand`).
 */
export function lazy<T>(build: () => T): () => T {
  let built = false;
  let value: T;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value;
  };
}
