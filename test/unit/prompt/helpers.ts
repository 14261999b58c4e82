import { vi } from 'vitest';
import { createPromptSystem, type PromptScopeOptions } from '../../../src/prompt/index.js';
import type { ToolView } from '../../../src/types.js';

export function toolView(names: string[]): ToolView {
  const sorted = [...names].sort();
  return {
    names: sorted,
    schemas: sorted.map((name) => ({ name, description: name, parameters: { type: 'object' } })),
    has: (name) => sorted.includes(name),
  };
}

/** A prompt system whose change notifications are recorded, and its global registry. */
export function setup(globalTools: string[] = []) {
  const onChange = vi.fn();
  const system = createPromptSystem({ globalTools: () => toolView(globalTools), onChange });
  return { system, onChange, prompt: system.global };
}

export function scopeOptions(overrides: Partial<PromptScopeOptions> = {}): PromptScopeOptions {
  return {
    agent: () => undefined,
    tools: () => toolView([]),
    builtins: () => ({ agent_id: 'a1', depth: '1', provider: 'scripted', model: 'echo' }),
    ...overrides,
  };
}

export const names = (prompt: { sections: { name: string }[] }) => prompt.sections.map((s) => s.name);
