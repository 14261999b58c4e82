/** The models folder's surface for brood's own tests: the public one (public.ts) and a few internals. */

export { loadAdapter } from './adapters.js';
export { createModelCatalog } from './catalog.js';
export * from './public.js';
export { resolveChildRoute } from './route.js';
export { hasFaultTurns } from './scripted.js';
