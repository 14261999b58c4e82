/**
 * A plan's view crosses a link once (src/wire/view-numbers.ts): the first plan of a view carries it
 * and its number, later ones the number alone, and the receiving side fills it in. Whatever the order
 * and however many views a runtime has, every plan arrives with its own view.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DriverView } from '../../../src/wire/protocol.js';
import { KnownViews, SentViews } from '../../../src/wire/view-numbers.js';

const view = (system: string): DriverView => ({ system, tools: [], classes: { run_code: 'exclusive' } });
const plan = (id: number, planView: DriverView | null) => ({ agentId: `agent-${id}`, view: planView });
/** A structured clone, as a thread link makes: nothing is shared between the two sides. */
const crossed = <T>(value: T): T => structuredClone(value);

describe('plan views numbered on a link', () => {
  it('the first plan of a view carries it; later ones carry only its number and arrive with it', () => {
    const sent = new SentViews();
    const known = new KnownViews();
    const first = sent.number(plan(1, view('you help')));
    const second = sent.number(plan(2, view('you help')));
    expect(first.plan.view).toEqual(view('you help'));
    expect(second.plan.view).toBeNull();
    expect(second.view).toBe(first.view);
    expect(known.resolve(crossed(first.plan), first.view)).toEqual(plan(1, view('you help')));
    expect(known.resolve(crossed(second.plan), second.view)).toEqual(plan(2, view('you help')));
  });

  it('a plan without a view (the parent could not resolve it) crosses as it is, unnumbered', () => {
    expect(new SentViews().number(plan(1, null))).toEqual({ plan: plan(1, null) });
    expect(new KnownViews().resolve(plan(1, null), undefined)).toEqual(plan(1, null));
  });

  it('a number the receiving side was never sent resolves to nothing', () => {
    expect(new KnownViews().resolve(plan(1, null), 7)).toBeUndefined();
  });

  it('any sequence of plans over any number of distinct views arrives with each plan its own view', () => {
    fc.assert(
      // Up to 700 distinct prompts: past the 256 texts a side numbers before it starts over.
      fc.property(fc.array(fc.integer({ min: 0, max: 700 }), { minLength: 1, maxLength: 400 }), (systems) => {
        const sent = new SentViews();
        const known = new KnownViews();
        systems.forEach((system, i) => {
          const numbered = sent.number(plan(i, view(`view ${system}`)));
          expect(known.resolve(crossed(numbered.plan), numbered.view)).toEqual(plan(i, view(`view ${system}`)));
        });
      }),
    );
  });
  it('views that differ only in one shared schema, or in where a schema sits, are different views', () => {
    const read = Object.freeze({ name: 'read', description: 'reads', parameters: { type: 'object' } });
    const write = Object.freeze({ name: 'write', description: 'writes', parameters: { type: 'object' } });
    const withTools = (...tools: DriverView['tools']): DriverView => ({ ...view('same'), tools });
    const sent = new SentViews();
    const numbers = [
      withTools(read, write),
      withTools(write, read),
      withTools(read),
      withTools({ ...read, description: 'reads more' }),
      withTools(read, write),
      withTools({ ...read }, { ...write }),
    ].map((tools) => sent.number(plan(1, tools)).view);
    expect(new Set(numbers.slice(0, 4)).size).toBe(4);
    expect(numbers[4]).toBe(numbers[0]);
    expect(numbers[5]).toBe(numbers[0]);
  });

  it('views with one prompt and different concurrency classes are different views', () => {
    const sent = new SentViews();
    const classed = (classes: DriverView['classes']): DriverView => ({ ...view('same prompt'), classes });
    const numbers = [
      classed({ read: 'parallel' }),
      classed({ read: 'exclusive' }),
      classed({}),
      classed({ read: 'parallel' }),
    ].map((classes) => sent.number(plan(1, classes)).view);
    expect(new Set(numbers.slice(0, 3)).size).toBe(3);
    expect(numbers[3]).toBe(numbers[0]);
  });
});
