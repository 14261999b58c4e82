/** Session stores (SPEC §6). */
export { memorySessions } from './memory.js';
export { fileSessions, isSafeSessionId } from './jsonl.js';
export type { FileSessionOptions, FileSessionStore } from './jsonl.js';
export { validateDelegationDepth } from './validate.js';
