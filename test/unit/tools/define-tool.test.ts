import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { z as z3 } from 'zod/v3';
import { BroodError } from '../../../src/errors.js';
import { defineTool } from '../../../src/tools/define-tool.js';
import { createToolSystem } from '../../../src/tools/system.js';
import { expectCode } from '../../support/codes.js';

const base = { description: 'd', execute: () => 'ok' };

describe('defineTool', () => {
  it('keeps idempotent: true on the definition and refuses a non-boolean idempotent as INVALID_CONFIG', () => {
    const parameters = z.object({});
    expect(defineTool({ ...base, name: 'upsert', parameters, idempotent: true }).idempotent).toBe(true);
    expect(defineTool({ ...base, name: 'send', parameters }).idempotent).toBeUndefined();
    expectCode(
      () => defineTool({ ...base, name: 'bad', parameters, idempotent: 'yes' as unknown as boolean }),
      'INVALID_CONFIG',
    );
  });

  it('converts a zod schema to JSON Schema without $schema and returns a frozen definition', () => {
    const tool = defineTool({
      ...base,
      name: 'add',
      parameters: z.object({ a: z.number(), b: z.number().optional() }),
    });
    expect(tool.parameters).not.toHaveProperty('$schema');
    expect(tool.parameters).toMatchObject({ type: 'object', properties: { a: { type: 'number' } }, required: ['a'] });
    expect(Object.isFrozen(tool)).toBe(true);
    expect(Object.isFrozen(tool.parameters)).toBe(true);
    expect(tool.parse({ a: 1 })).toEqual({ a: 1 });
  });

  it('accepts a plain JSON Schema, copies it and validates against it', () => {
    const schema: Record<string, unknown> = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { n: { type: 'integer' } },
      required: ['n'],
    };
    const tool = defineTool({ ...base, name: 'json', parameters: schema });
    schema.required = [];
    expect(tool.parameters).not.toHaveProperty('$schema');
    expect(tool.parameters.required).toEqual(['n']);
    expect(tool.parse({ n: 2 })).toEqual({ n: 2 });
    expectCode(() => tool.parse({ n: 1.5 }), 'INVALID_ARGS');
    expectCode(() => tool.parse({}), 'INVALID_ARGS');
  });

  it('INVALID_ARGS names the tool and the failing path', () => {
    const tool = defineTool({
      ...base,
      name: 'deep',
      parameters: z.object({ items: z.array(z.object({ id: z.string() })) }),
    });
    let error: unknown;
    try {
      tool.parse({ items: [{ id: 'a' }, { id: 3 }] });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BroodError);
    expect((error as BroodError).code).toBe('INVALID_ARGS');
    expect((error as BroodError).message).toContain('deep');
    expect((error as BroodError).message).toContain('items[1].id');
  });

  it.each(['', 'has space', 'a'.repeat(65), 'dot.name', 'ünicode'])(
    'rejects tool name %j with INVALID_CONFIG',
    (name) => {
      expectCode(() => defineTool({ ...base, name, parameters: {} }), 'INVALID_CONFIG');
    },
  );

  it.each(['a', 'A-b_9', 'x'.repeat(64)])('accepts tool name %j', (name) => {
    expect(defineTool({ ...base, name, parameters: {} }).name).toBe(name);
  });

  it('rejects an empty description, missing execute and unrepresentable zod schemas with INVALID_CONFIG', () => {
    expectCode(() => defineTool({ ...base, name: 'x', description: '  ', parameters: {} }), 'INVALID_CONFIG');
    expectCode(() => defineTool({ name: 'x', description: 'd', parameters: {} } as never), 'INVALID_CONFIG');
    expectCode(() => defineTool({ ...base, name: 'x', parameters: z.object({ d: z.date() }) }), 'INVALID_CONFIG');
    expectCode(() => defineTool({ ...base, name: 'x', parameters: { type: 'nonsense' } }), 'INVALID_CONFIG');
  });

  it('accepts a zod 3 schema (zod/v3): the model sees its input as JSON Schema, zod 3 validates', async () => {
    const tool = defineTool({
      ...base,
      name: 'deploy',
      parameters: z3
        .object({
          service: z3.string().min(1).describe('which service'),
          replicas: z3.number().int().max(10).default(1),
          region: z3.enum(['eu', 'us']).optional(),
          tags: z3.array(z3.string()).max(3),
          note: z3.string().nullable(),
          slug: z3.string().transform((text) => text.toLowerCase()),
        })
        .strict(),
      execute: (args) => `${args.service} x${args.replicas} ${args.slug}`,
    });
    expect(tool.parameters).toEqual({
      type: 'object',
      properties: {
        service: { type: 'string', minLength: 1, description: 'which service' },
        replicas: { type: 'integer', maximum: 10, default: 1 },
        region: { type: 'string', enum: ['eu', 'us'] },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
        note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        slug: { type: 'string' },
      },
      required: ['service', 'tags', 'note', 'slug'],
      additionalProperties: false,
    });
    expect(tool.parse({ service: 'web', tags: [], note: null, slug: 'WEB' })).toEqual({
      service: 'web',
      replicas: 1,
      tags: [],
      note: null,
      slug: 'web',
    });
    const refusal = expectCode(() => tool.parse({ service: 'web', tags: [1], note: null, slug: 'x' }), 'INVALID_ARGS');
    expect(refusal.details).toMatchObject({ tool: 'deploy', path: 'tags[0]' });
    expectCode(() => tool.parse({ service: 'web', tags: [], note: null, slug: 'x', extra: 1 }), 'INVALID_ARGS');
  });

  it('shows unions, literals, enums, records, tuples and refinements of a zod 3 schema as JSON Schema', () => {
    enum Level {
      Low = 0,
      High = 1,
    }
    const tool = defineTool({
      ...base,
      name: 'shapes',
      parameters: z3.object({
        kind: z3.discriminatedUnion('type', [
          z3.object({ type: z3.literal('a'), n: z3.number().gt(0) }),
          z3.object({ type: z3.literal('b') }),
        ]),
        level: z3.nativeEnum(Level),
        counts: z3.record(z3.number().int()),
        pair: z3.tuple([z3.string(), z3.boolean()]),
        even: z3.number().refine((n) => n % 2 === 0, 'must be even'),
        loose: z3.object({}).passthrough(),
      }),
    });
    expect(tool.parameters.properties).toEqual({
      kind: {
        anyOf: [
          {
            type: 'object',
            properties: { type: { const: 'a' }, n: { type: 'number', exclusiveMinimum: 0 } },
            required: ['type', 'n'],
          },
          { type: 'object', properties: { type: { const: 'b' } }, required: ['type'] },
        ],
      },
      level: { enum: [0, 1] },
      counts: { type: 'object', additionalProperties: { type: 'integer' } },
      pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'boolean' }] },
      even: { type: 'number' },
      loose: { type: 'object', properties: {} },
    });
    // What JSON Schema cannot say is still enforced: the refinement runs in zod 3's own safeParse.
    const args = { kind: { type: 'b' }, level: 1, counts: {}, pair: ['x', true], loose: {} };
    expect(tool.parse({ ...args, even: 2 })).toMatchObject({ even: 2 });
    expectCode(() => tool.parse({ ...args, even: 3 }), 'INVALID_ARGS');
  });

  it('a zod 3 tool runs through the resolver like any other (model JSON in, INVALID_ARGS for bad args)', async () => {
    const system = createToolSystem();
    system.global.register(
      defineTool({ ...base, name: 'double', parameters: z3.object({ n: z3.number() }), execute: (args) => args.n * 2 }),
    );
    expect(await system.global.execute({ name: 'double', arguments: '{"n":21}' })).toMatchObject({ content: '42' });
    const bad = await system.global.execute({ name: 'double', arguments: '{"n":"21"}' });
    expect(bad.error?.code).toBe('INVALID_ARGS');
  });

  it('refuses a zod 3 type with no JSON Schema with INVALID_CONFIG naming it', () => {
    const refusal = expectCode(
      () => defineTool({ ...base, name: 'x', parameters: z3.object({ when: z3.date() }) }),
      'INVALID_CONFIG',
    );
    expect(refusal.message).toContain('ZodDate');
  });

  it('refuses another Standard Schema by name instead of calling it JSON data', () => {
    const foreign = { '~standard': { version: 1, vendor: 'valibot', validate: () => ({ value: {} }) } };
    const refusal = expectCode(
      () => defineTool({ ...base, name: 'x', parameters: foreign as never }),
      'INVALID_CONFIG',
    );
    expect(refusal.message).toContain('valibot Standard Schema');
  });

  it('defines run_code without complaint (reservation is enforced by register)', () => {
    expect(defineTool({ ...base, name: 'run_code', parameters: {} }).name).toBe('run_code');
  });
});
