// brood/testing: helpers for deterministic tests of hosts built on brood.
export { scriptedModels } from './models/scripted.js';
export type { ScriptedOptions, ScriptedTurn, ScriptedScript } from './models/scripted.js';
export { memorySessions } from './sessions/memory.js';
