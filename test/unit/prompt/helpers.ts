import type { ToolView } from '../../../src/types.js';

export function toolView(names: string[]): ToolView {
  const sorted = [...names].sort();
  return {
    names: sorted,
    schemas: sorted.map((name) => ({ name, description: name, parameters: { type: 'object' } })),
    has: (name) => sorted.includes(name),
  };
}
