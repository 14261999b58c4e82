// brood/testing: helpers for deterministic tests of hosts built on brood.

export type { ScriptedOptions, ScriptedScript, ScriptedTurn } from './models/scripted.js';
export { scriptedModels } from './models/scripted.js';
export { memorySessions } from './sessions/memory.js';
