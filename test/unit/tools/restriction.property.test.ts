import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../../src/tools/define-tool.js';
import { createToolSystem } from '../../../src/tools/system.js';
import type { ToolDefinition, ToolFilter } from '../../../src/types.js';
import { expectCode } from '../../support/codes.js';
import { fakeAgent } from './helpers.js';

const POOL: readonly string[] = ['alpha', 'Beta', 'beta', 'gamma', 'delta', 'eps_1', 'z-9', 'Zeta'];
const poolName = fc.constantFrom(...POOL);
const nameSet = fc.uniqueArray(poolName, { maxLength: POOL.length });

const filterArb: fc.Arbitrary<ToolFilter> = fc.oneof(
  fc.record({ allow: nameSet }),
  fc.record({ deny: nameSet }),
  fc.record({ allow: nameSet, deny: nameSet }),
);

function recorder(layer: string, name: string, runs: string[]): ToolDefinition {
  return defineTool({
    name,
    description: `${layer} ${name}`,
    parameters: z.object({}),
    execute: () => {
      runs.push(`${layer}:${name}`);
      return `${layer}:${name}`;
    },
  });
}

function admits(filter: ToolFilter, name: string): boolean {
  if (filter.allow !== undefined && !filter.allow.includes(name)) return false;
  return filter.deny === undefined || !filter.deny.includes(name);
}

/** The set-theoretic definition of SPEC §4 rule 3. */
function expectedView(globals: Iterable<string>, locals: readonly string[], filters: readonly ToolFilter[]): string[] {
  const admitted = [...globals].filter((g) => filters.every((f) => admits(f, g)));
  const names = new Set([...admitted, ...locals]);
  return [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

describe('restriction algebra (property)', () => {
  it('view().names is (globals filtered by every restriction) ∪ own tools, live across changes', async () => {
    await fc.assert(
      fc.asyncProperty(
        nameSet,
        nameSet,
        fc.array(filterArb, { maxLength: 4 }),
        nameSet,
        fc.array(poolName, { maxLength: 3 }),
        async (globalNames, localNames, filters, laterGlobals, removals) => {
          const runs: string[] = [];
          const system = createToolSystem();
          const globals = new Map<string, () => void>();
          for (const name of globalNames) globals.set(name, system.global.register(recorder('global', name, runs)));
          const scope = system.createScope(() => fakeAgent());
          for (const name of localNames) scope.registry.register(recorder('agent', name, runs));
          // Restored filters may name tools that are not registered (yet): install without name checks.
          for (const filter of filters) scope.installFilter(filter, { validate: false });

          const check = async () => {
            const expected = expectedView(globals.keys(), localNames, filters);
            expect(scope.registry.view().names).toEqual(expected);
            expect(scope.resolve().map((t) => t.name)).toEqual(expected);
            expect(system.global.view().names).toEqual(
              [...globals.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
            );
            for (const name of POOL) {
              runs.length = 0;
              const result = await scope.registry.execute({ name, arguments: {} });
              if (expected.includes(name)) {
                const layer = localNames.includes(name) ? 'agent' : 'global';
                expect(result).toMatchObject({ isError: false, content: `${layer}:${name}` });
                expect(runs).toEqual([`${layer}:${name}`]);
              } else {
                expect(result.error?.code).toBe('UNKNOWN_TOOL');
                expect(result.isError).toBe(true);
                expect(runs).toEqual([]);
              }
            }
          };

          await check();
          for (const name of laterGlobals) {
            if (globals.has(name)) continue;
            globals.set(name, system.global.register(recorder('global', name, runs)));
            await check();
          }
          for (const name of removals) {
            globals.get(name)?.();
            globals.delete(name);
            await check();
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a later global tool: deny-only admits it unless named, allow excludes it unless named', () => {
    fc.assert(
      fc.property(fc.array(filterArb, { minLength: 1, maxLength: 3 }), poolName, (filters, later) => {
        const system = createToolSystem();
        const scope = system.createScope(() => undefined);
        for (const filter of filters) scope.installFilter(filter, { validate: false });
        system.global.register(recorder('global', later, []));
        const visible = scope.registry.view().has(later);
        const rule = filters.every(
          (f) => (f.allow === undefined || f.allow.includes(later)) && !(f.deny ?? []).includes(later),
        );
        expect(visible).toBe(rule);
      }),
      { numRuns: 200 },
    );
  });

  it('validated restrict accepts exactly filters naming registered globals', () => {
    fc.assert(
      fc.property(nameSet, nameSet, filterArb, (globalNames, localNames, filter) => {
        const system = createToolSystem();
        for (const name of globalNames) system.global.register(recorder('global', name, []));
        const scope = system.createScope(() => undefined);
        for (const name of localNames) scope.registry.register(recorder('agent', name, []));
        const named = [...(filter.allow ?? []), ...(filter.deny ?? [])];
        const valid = named.every((n) => globalNames.includes(n));
        if (valid) expect(() => scope.registry.restrict(filter)).not.toThrow();
        else expectCode(() => scope.registry.restrict(filter), 'INVALID_TOOL_FILTER');
      }),
      { numRuns: 200 },
    );
  });

  it('removing a global tool removes it from every scope view', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(poolName, { minLength: 1 }),
        fc.array(fc.option(filterArb, { nil: undefined }), { minLength: 1, maxLength: 4 }),
        (globalNames, scopeFilters) => {
          const system = createToolSystem();
          const disposers = globalNames.map((name) => system.global.register(recorder('global', name, [])));
          const scopes = scopeFilters.map((filter) => {
            const scope = system.createScope(() => undefined);
            if (filter !== undefined) scope.installFilter(filter, { validate: false });
            return scope;
          });
          disposers[0]?.();
          const removed = globalNames[0] as string;
          for (const scope of scopes) expect(scope.registry.view().has(removed)).toBe(false);
          expect(system.global.view().has(removed)).toBe(false);
        },
      ),
    );
  });
});
