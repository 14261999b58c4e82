/** The fields of a driver plan a test does not care about, at brood's defaults (src/defaults.ts). */
import { DEFAULTS } from '../../src/defaults.js';

export function planDefaults() {
  return {
    history: [],
    ownStart: 0,
    maxParallelToolCalls: 4,
    codeMode: 'native' as const,
    codeBusyTimeoutMs: DEFAULTS.codeBusyTimeoutMs,
    codeWallTimeoutMs: DEFAULTS.codeWallTimeoutMs,
    codeLimits: DEFAULTS.codeResourceLimits,
  };
}
