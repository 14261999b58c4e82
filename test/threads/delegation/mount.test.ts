/** SPEC §11 config at use() and §11.1 binding: mount/unmount with the provider, rollback, reservations. */
import { afterEach, describe, expect, it } from 'vitest';
import type { Brood } from '../../../src/brood.js';
import { jobTools, messageTools, type SubagentToolConfig, subagentTool } from '../../../src/delegation/index.js';
import type { SubagentCapabilities } from '../../../src/subagents/types.js';
import { defineTool } from '../../../src/tools/define-tool.js';
import { expectCode } from '../../support/codes.js';
import { route } from '../../support/route.js';
import { behaviourBrood } from '../../support/runtime.js';
import { customProvider } from './helpers.js';

let brood: Brood | undefined;
afterEach(async () => {
  await brood?.close();
  brood = undefined;
});

const names = (b: Brood) => b.tools.view().names;
const description = (b: Brood, name: string) => b.tools.view().schemas.find((s) => s.name === name)?.description;

describe('mounting with the provider', () => {
  it('appears and disappears synchronously with provider register/dispose, with the new provider wording', () => {
    brood = behaviourBrood({ providers: [] });
    brood.use(subagentTool({ provider: 'custom', toolName: 'delegate' }));
    expect(names(brood)).not.toContain('delegate');
    const disposeFresh = brood.subagents.register(customProvider('custom'));
    expect(names(brood)).toContain('delegate');
    expect(description(brood, 'delegate')).toMatch(/standalone/);
    disposeFresh();
    expect(names(brood)).not.toContain('delegate');
    brood.subagents.register(customProvider('custom', { inheritsParentContext: true }));
    expect(description(brood, 'delegate')).toMatch(/completed turns/);
  });

  it('mounts inside use() when the provider already exists, and the disposer releases everything', () => {
    brood = behaviourBrood();
    const dispose = brood.use(subagentTool({ provider: 'spawn' }));
    expect(names(brood)).toEqual(expect.arrayContaining(['subagent', 'job_output', 'job_kill', 'job_list']));
    dispose();
    expect(names(brood)).toEqual([]);
    // The name is free again.
    brood.use(subagentTool({ provider: 'spawn' }));
    expect(names(brood)).toContain('subagent');
  });

  it('a mount that fails rolls back the provider registration that triggered it', () => {
    brood = behaviourBrood({ providers: [] });
    brood.use(subagentTool({ provider: 'acp' })); // numeric maxDepth needs depthLimit
    const error = expectCode(
      () => brood!.subagents.register(customProvider('acp', { caps: { depthLimit: false } })),
      'INVALID_CONFIG',
    );
    expect(error.message).toMatch(/maxDepth.*depthLimit/);
    expect(brood.subagents.list()).toEqual([]);
    // Only the instance-lifetime job tools remain (installed at use(), independent of the provider).
    expect(names(brood)).toEqual(['job_kill', 'job_list', 'job_output']);
  });

  it('a host tool that took the name after use() fails the mount with INVALID_CONFIG and rolls the provider back', () => {
    brood = behaviourBrood({ providers: [] });
    brood.use(subagentTool({ provider: 'custom', toolName: 'delegate', enableRunInBackground: false }));
    brood.tools.register(
      defineTool({ name: 'delegate', description: 'd', parameters: { type: 'object' }, execute: () => 'x' }),
    );
    expectCode(() => brood!.subagents.register(customProvider('custom')), 'INVALID_CONFIG');
    expect(brood.subagents.list()).toEqual([]);
  });

  it.each<[string, SubagentToolConfig, Partial<SubagentCapabilities>, RegExp]>([
    ['maxDepth → depthLimit', { provider: 'x' }, { depthLimit: false }, /depthLimit/],
    ['persona → persona', { provider: 'x', persona: 'p' }, { persona: false }, /persona/],
    ['toolFilter → toolFilter', { provider: 'x', toolFilter: { deny: [] } }, { toolFilter: false }, /toolFilter/],
    [
      'agentOptions → agentOptions',
      { provider: 'x', agentOptions: { maxTokens: 5 } },
      { agentOptions: false },
      /agentOptions/,
    ],
    [
      'model selection → agentOptions',
      { provider: 'x', enableModelSelection: true },
      { agentOptions: false },
      /agentOptions/,
    ],
    [
      'settings selection → agentOptions',
      { provider: 'x', modelSelectionSettings: true },
      { agentOptions: false },
      /agentOptions/,
    ],
    ["'provider-managed' with depthLimit", { provider: 'x', maxDepth: 'provider-managed' }, {}, /provider-managed/],
  ])(
    'use() fails with INVALID_CONFIG when the provider lacks a needed capability: %s',
    (_label, config, caps, message) => {
      brood = behaviourBrood({ providers: [customProvider('x', { caps })] });
      const error = expectCode(() => brood!.use(subagentTool(config)), 'INVALID_CONFIG');
      expect(error.message).toMatch(message);
      expect(names(brood)).toEqual([]);
      // Nothing left behind: the same name can be used by a valid instance.
      brood.use(subagentTool({ provider: 'x', maxDepth: caps.depthLimit === false ? 'provider-managed' : 3 }));
      expect(names(brood)).toContain('subagent');
    },
  );

  it("continuable needs prepareContinuable; 'provider-managed' mounts on a provider without depthLimit", () => {
    brood = behaviourBrood({
      providers: [
        customProvider('oneshot', { continuable: false }),
        customProvider('remote', { caps: { depthLimit: false } }),
      ],
    });
    expectCode(
      () => brood!.use(subagentTool({ provider: 'oneshot', backgroundMode: 'continuable' })),
      'INVALID_CONFIG',
    );
    expect(names(brood)).toEqual([]);
    brood.use(subagentTool({ provider: 'remote', toolName: 'remote', maxDepth: 'provider-managed' }));
    expect(names(brood)).toContain('remote');
  });
});

describe('reservations and shared installs', () => {
  it('rejects a toolName used by another instance even while its provider is absent', () => {
    brood = behaviourBrood({ providers: [] });
    brood.use(subagentTool({ provider: 'later' }));
    const error = expectCode(() => brood!.use(subagentTool({ provider: 'other' })), 'INVALID_CONFIG');
    expect(error.message).toMatch(/toolName 'subagent'/);
  });

  it('rejects a toolName that is already a registered tool, and the shared tool names', () => {
    brood = behaviourBrood();
    brood.tools.register(
      defineTool({ name: 'taken', description: 'd', parameters: { type: 'object' }, execute: () => 'x' }),
    );
    expectCode(() => brood!.use(subagentTool({ provider: 'spawn', toolName: 'taken' })), 'INVALID_CONFIG');
    expectCode(() => brood!.use(subagentTool({ provider: 'spawn', toolName: 'job_output' })), 'INVALID_CONFIG');
    expect(names(brood)).toEqual(['taken']);
  });

  it('allows one list_subagent_models owner per runtime', () => {
    brood = behaviourBrood();
    brood.use(subagentTool({ provider: 'spawn', enableModelSelection: true }));
    expect(names(brood)).toContain('list_subagent_models');
    const error = expectCode(
      () => brood!.use(subagentTool({ provider: 'spawn', toolName: 'second', modelSelectionSettings: true })),
      'INVALID_CONFIG',
    );
    expect(error.message).toMatch(/list_subagent_models/);
    expect(names(brood)).not.toContain('second');
  });

  it('a config error from use() is thrown synchronously and leaves nothing behind', () => {
    brood = behaviourBrood();
    const error = expectCode(() => brood!.use(subagentTool({ provider: 'spawn', toolFilter: {} })), 'INVALID_CONFIG');
    expect(error.message).toMatch(/toolFilter/);
    expect(names(brood)).toEqual([]);
    expect(brood.prompt.assemble().sections).toEqual([]);
  });

  it('job tools are installed once and ref-counted across explicit use and instances', () => {
    brood = behaviourBrood();
    const explicit = brood.use(jobTools());
    const instance = brood.use(subagentTool({ provider: 'spawn' }));
    const again = brood.use(jobTools());
    expect(names(brood).filter((n) => n === 'job_output')).toHaveLength(1);
    explicit();
    instance();
    expect(names(brood)).toContain('job_output');
    again();
    expect(names(brood)).toEqual([]);
  });

  it('message tools are ref-counted too; continuable and disabled-background instances do not add job tools', () => {
    brood = behaviourBrood();
    const a = brood.use(messageTools());
    const b = brood.use(messageTools());
    brood.use(subagentTool({ provider: 'spawn', backgroundMode: 'continuable' }));
    brood.use(subagentTool({ provider: 'fork', toolName: 'subagent_fork', enableRunInBackground: false }));
    expect(names(brood)).toEqual(['send_message', 'subagent', 'subagent_fork']);
    a();
    expect(names(brood)).toContain('send_message');
    b();
    expect(names(brood)).not.toContain('send_message');
  });
});

describe('guidance section', () => {
  it('a continuable instance renders tool:<toolName> only where the tool is visible', async () => {
    brood = behaviourBrood({ providers: [] });
    brood.use(subagentTool({ provider: 'spawn', backgroundMode: 'continuable' }));
    const agent = await brood.createAgent({ model: route });
    expect(agent.prompt.assemble().sections.map((s) => s.name)).not.toContain('tool:subagent');
    const disposeProvider = brood.subagents.register(customProvider('spawn'));
    const first = agent.prompt.assemble();
    expect(first.sections.map((s) => s.name)).toContain('tool:subagent');
    expect(agent.prompt.assemble().system).toBe(first.system); // byte-identical while nothing changes
    const restricted = await brood.createAgent({ model: route, toolFilter: { deny: ['subagent'] } });
    expect(restricted.prompt.assemble().sections.map((s) => s.name)).not.toContain('tool:subagent');
    disposeProvider();
    expect(agent.prompt.assemble().sections.map((s) => s.name)).not.toContain('tool:subagent');
  });

  it('a one-shot instance registers no section', () => {
    brood = behaviourBrood();
    brood.use(subagentTool({ provider: 'spawn' }));
    expect(brood.prompt.assemble().sections).toEqual([]);
  });
});
