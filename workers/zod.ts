// zod for a pool thread, in a bundle of its own (dist/workers/zod.cjs) that workers/zod-on-demand.ts
// requires on first use: a thread that never needs zod never reads it.
export { z } from 'zod';
