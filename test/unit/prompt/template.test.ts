import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isValidVariableName, renderTemplate } from '../../../src/prompt/template.js';
import { expectCode } from '../../support/codes.js';

const values: Record<string, string | undefined> = { name: 'Ada', x: 'X', a_1: 'A1', empty: '', missing: undefined };
const where = { section: 'greeting', knownVariables: Object.keys(values) };
const lookup = (name: string) => values[name];
const render = (text: string) => renderTemplate(text, lookup, where);

describe('isValidVariableName', () => {
  it.each(['a', 'name', 'a_1', 'x9', 'snake_case_name'])('accepts %j', (name) => {
    expect(isValidVariableName(name)).toBe(true);
  });
  it.each(['', 'A', 'Name', '1a', '_a', 'a-b', 'a b', ' a', 'a.b', 'ä', 'a\n', 42, undefined])('rejects %j', (name) => {
    expect(isValidVariableName(name)).toBe(false);
  });
});

describe('renderTemplate', () => {
  it('substitutes valid references', () => {
    expect(render('Hello {{name}}, {{x}}{{a_1}}!')).toBe('Hello Ada, XA1!');
  });

  it('leaves text without references untouched', () => {
    expect(render('plain text { } {x} }')).toBe('plain text { } {x} }');
  });

  it('substitutes an empty-string value', () => {
    expect(render('[{{empty}}]')).toBe('[]');
  });

  it('treats a lone {{ with no later }} as literal text', () => {
    expect(render('open {{ and never closed')).toBe('open {{ and never closed');
    expect(render('{{name}} then {{')).toBe('Ada then {{');
    expect(render('{{')).toBe('{{');
  });

  it('treats }} alone as literal text', () => {
    expect(render('closing }} only')).toBe('closing }} only');
    expect(render('}}{{name}}}}')).toBe('}}Ada}}');
  });

  it.each(['{{ x }}', '{{x }}', '{{ x}}', '{{}}', '{{{x}}}', '{{X}}', '{{1a}}', '{{a-b}}', '{{a {{x}}'])(
    'rejects malformed reference in %j',
    (text) => {
      const error = expectCode(() => render(`before ${text} after`), 'TEMPLATE_ERROR');
      expect(error.details?.section).toBe('greeting');
      expect(error.details?.knownVariables).toEqual([...where.knownVariables].sort());
    },
  );

  it('rejects an unknown variable, naming the section and listing known variables', () => {
    const error = expectCode(() => render('hi {{nope}}'), 'TEMPLATE_ERROR');
    expect(error.details).toMatchObject({ section: 'greeting', variable: 'nope' });
    expect(error.details?.knownVariables).toEqual(['a_1', 'empty', 'missing', 'name', 'x']);
    expect(error.message).toContain('greeting');
    expect(error.message).toContain('a_1');
  });

  it('rejects a known variable with no value for this assembly', () => {
    const error = expectCode(() => render('hi {{missing}}'), 'TEMPLATE_ERROR');
    expect(error.details).toMatchObject({ section: 'greeting', variable: 'missing' });
  });

  it('does not call lookup for unknown names', () => {
    let calls = 0;
    const counting = (name: string) => {
      calls++;
      return values[name];
    };
    expectCode(() => renderTemplate('{{nope}}', counting, where), 'TEMPLATE_ERROR');
    expect(calls).toBe(0);
  });

  it('never re-scans substituted values', () => {
    const tricky = { v: '{{v}} {{ bad }} {{}} {{unknown}}' };
    const out = renderTemplate('<{{v}}>', (n) => tricky[n as 'v'], { section: 's', knownVariables: ['v'] });
    expect(out).toBe('<{{v}} {{ bad }} {{}} {{unknown}}>');
  });

  it('property: any substituted value comes out verbatim', () => {
    const braces = fc.string({ unit: fc.constantFrom('{', '}', 'a', 'x', ' ', '_', 'Z') });
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), braces), { minLength: 1, maxLength: 4 }), (parts) => {
        const names = parts.map((_, i) => `v${i}`);
        const text = names.map((n) => `[{{${n}}}]`).join('|');
        const lookupPart = (name: string) => parts[Number(name.slice(1))];
        const out = renderTemplate(text, lookupPart, { section: 's', knownVariables: names });
        expect(out).toBe(parts.map((p) => `[${p}]`).join('|'));
      }),
    );
  });

  it('property: text without {{ is returned unchanged', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        fc.pre(!text.includes('{{'));
        expect(render(text)).toBe(text);
      }),
    );
  });
});
