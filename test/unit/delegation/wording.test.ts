/** SPEC §11.2, §11.8, §11.10: what the model reads, per provider context and mode, byte-stable. */
import { describe, expect, it } from 'vitest';
import { parseSubagentToolConfig } from '../../../src/delegation/config.js';
import { continuableSectionText, describeTool, toolParameters, toolWording } from '../../../src/delegation/wording.js';

const fresh = { inheritsParentContext: false };
const fork = { inheritsParentContext: true };
const config = (extra: Record<string, unknown> = {}) => parseSubagentToolConfig({ provider: 'spawn', ...extra });
const props = (schema: Record<string, unknown>) => Object.keys(schema.properties as object);

describe('delegation tool wording', () => {
  it('asks a fresh child for a standalone prompt and tells a fork it sees the completed turns', () => {
    expect(describeTool(config(), fresh, false)).toMatch(/does not see this conversation.*complete, standalone/s);
    expect(describeTool(config(), fork, false)).toMatch(/completed turns/);
    expect(describeTool(config(), fork, false)).not.toMatch(/standalone/);
  });

  it('documents one-shot background: default false, job_output, job_kill', () => {
    const text = describeTool(config(), fresh, false);
    expect(text).toMatch(/omitted or false/);
    expect(text).toMatch(/job_output/);
    expect(text).toMatch(/job_kill/);
    expect(text).not.toMatch(/send_message/);
  });

  it('documents continuable background: default true, settlement notice, send_message', () => {
    const text = describeTool(config({ backgroundMode: 'continuable' }), fresh, false);
    expect(text).toMatch(/omitted or true/);
    expect(text).toMatch(/notice/);
    expect(text).toMatch(/send_message/);
    expect(text).not.toMatch(/job_output/);
  });

  it('has description and prompt required; run_in_background only with background; selection only when enabled', () => {
    const plain = toolParameters(config(), fresh, false);
    expect(plain.required).toEqual(['description', 'prompt']);
    expect(props(plain)).toEqual(['description', 'prompt', 'run_in_background']);
    expect(props(toolParameters(config({ enableRunInBackground: false }), fresh, false))).toEqual([
      'description',
      'prompt',
    ]);
    expect(props(toolParameters(config(), fresh, true))).toEqual([
      'description',
      'prompt',
      'run_in_background',
      'provider',
      'model',
      'reasoning_effort',
    ]);
    expect(describeTool(config(), fresh, true)).toMatch(/list_subagent_models/);
    expect(describeTool(config({ enableRunInBackground: false }), fresh, false)).not.toMatch(/run_in_background/);
  });

  it('never enumerates the catalog: selection fields are free strings', () => {
    const schema = toolParameters(config(), fresh, true) as { properties: Record<string, Record<string, unknown>> };
    for (const field of ['provider', 'model', 'reasoning_effort']) {
      expect(schema.properties[field]).toMatchObject({ type: 'string' });
      expect(schema.properties[field]).not.toHaveProperty('enum');
    }
  });

  it('is byte-identical for the same configuration and provider facts (prefix stability)', () => {
    const variants = [config(), config({ backgroundMode: 'continuable' }), config({ enableModelSelection: true })];
    for (const c of variants) {
      for (const facts of [fresh, fork]) {
        expect(JSON.stringify(toolWording(c, facts, true))).toBe(
          JSON.stringify(toolWording(config({ ...c }), { ...facts }, true)),
        );
      }
    }
    expect(continuableSectionText('subagent')).toBe(continuableSectionText('subagent'));
  });

  it('section text: start independent delegations together, keep working, foreground only when needed', () => {
    const text = continuableSectionText('delegate');
    expect(text).toMatch(/delegate/);
    expect(text).toMatch(/together in one assistant message/);
    expect(text).toMatch(/keep working/);
    expect(text).toMatch(/only when your next action depends on the result/);
    expect(text).not.toMatch(/\{\{/);
  });
});
