// Stands in for zod's locales index inside the thread bundles (tsup.config.ts): brood's error
// messages are English, and zod's namespace re-export of every locale would otherwise put ~40
// locales (a third of the pool thread's bundle) on every thread's boot path.
export { default as en } from 'zod/v4/locales/en.js';
