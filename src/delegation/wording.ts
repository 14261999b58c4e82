/**
 * What the model reads about a delegation instance (SPEC §11.2, §11.8, §11.10): the tool description,
 * its JSON Schema and the continuable guidance section.
 *
 * Everything here is a pure function of the instance configuration and the provider's
 * `inheritsParentContext` flag: no timestamps, no ids, no catalog enumeration. That is what keeps the
 * schema, description and section byte-identical on every request while the provider set and config
 * are unchanged, so provider-side prefix caches stay valid.
 */
import type { JsonSchemaObject } from '../types.js';
import type { ResolvedSubagentToolConfig } from './config.js';

/** The provider facts the wording depends on (and nothing else from the provider object). */
export interface ProviderFacts {
  inheritsParentContext: boolean;
}

export interface ToolWording {
  description: string;
  parameters: JsonSchemaObject;
}

type WordingConfig = Pick<ResolvedSubagentToolConfig, 'toolName' | 'enableRunInBackground' | 'backgroundMode'>;

/** The tool's description and schema, with or without the model-selection fields. */
export function toolWording(config: WordingConfig, provider: ProviderFacts, selection: boolean): ToolWording {
  return {
    description: describeTool(config, provider, selection),
    parameters: toolParameters(config, provider, selection),
  };
}

export function describeTool(config: WordingConfig, provider: ProviderFacts, selection: boolean): string {
  const parts = [contextParagraph(provider), backgroundParagraph(config)];
  if (selection) parts.push(SELECTION_PARAGRAPH);
  return parts.join('\n\n');
}

function contextParagraph(provider: ProviderFacts): string {
  if (provider.inheritsParentContext) {
    return (
      'Delegate a task to a forked subagent: a separate agent that starts from a copy of this ' +
      "conversation's completed turns and works in its own session. It already knows what was said " +
      'before the current turn, so `prompt` only needs the task and what to report back (it does not ' +
      "see the current turn's tool results unless you include them)."
    );
  }
  return (
    'Delegate a task to a subagent: a separate agent that works in its own session with a fresh ' +
    'context. It does not see this conversation, so `prompt` must be a complete, standalone brief: the ' +
    'goal, the relevant facts, files and constraints, and what to report back.'
  );
}

function backgroundParagraph(config: WordingConfig): string {
  if (!config.enableRunInBackground) return 'The call waits for the subagent and returns its final answer.';
  if (config.backgroundMode === 'continuable') {
    return (
      'By default (run_in_background omitted or true) the subagent runs in the background: the call ' +
      'returns its subagent id as soon as the task is accepted and you keep working. When it finishes, a ' +
      'notice with its outcome and closing message arrives as a new message; send it more work later ' +
      'with send_message. Set run_in_background to false only when your next action depends on the ' +
      'result: the call then waits and returns the final answer.'
    );
  }
  return (
    'By default (run_in_background omitted or false) the call waits and returns the final answer. With ' +
    'run_in_background: true it returns a background job id at once; read the final output with ' +
    'job_output (a notice arrives when the job finishes) and stop it with job_kill.'
  );
}

const SELECTION_PARAGRAPH =
  "Model selection: omit provider, model and reasoning_effort to use the subagent's default model. " +
  'To choose another model give provider and model together (optionally with reasoning_effort); to ' +
  'change only the reasoning effort of the default model give reasoning_effort alone. ' +
  'list_subagent_models lists the available providers, models and efforts.';

export function toolParameters(config: WordingConfig, provider: ProviderFacts, selection: boolean): JsonSchemaObject {
  const properties: Record<string, JsonSchemaObject> = {
    description: { type: 'string', description: 'A short label for the task (3-5 words).' },
    prompt: {
      type: 'string',
      description: provider.inheritsParentContext
        ? 'The task for the forked subagent; it already sees the completed turns of this conversation.'
        : 'The complete, standalone task for the subagent; it does not see this conversation.',
    },
  };
  if (config.enableRunInBackground) properties.run_in_background = backgroundProperty(config);
  if (selection) Object.assign(properties, SELECTION_PROPERTIES);
  return { type: 'object', properties, required: ['description', 'prompt'] };
}

function backgroundProperty(config: WordingConfig): JsonSchemaObject {
  return config.backgroundMode === 'continuable'
    ? {
        type: 'boolean',
        description:
          'Default true: start the subagent in the background and get a settlement notice when it finishes. ' +
          'false: wait for its final answer.',
      }
    : {
        type: 'boolean',
        description:
          'Default false: wait for the final answer. true: start a background job; collect it with job_output, stop it with job_kill.',
      };
}

/** Free strings: the schema never enumerates the catalog, so catalog changes never change the tool. */
const SELECTION_PROPERTIES: Record<string, JsonSchemaObject> = {
  provider: { type: 'string', description: 'Model provider id for the subagent (give together with model).' },
  model: { type: 'string', description: 'Model id for the subagent (give together with provider).' },
  reasoning_effort: {
    type: 'string',
    description: 'Reasoning effort for the subagent model, when it supports efforts.',
  },
};

/** The §11.8 guidance for continuable instances; rendered only where the tool is visible. */
export function continuableSectionText(toolName: string): string {
  return (
    `Delegation with ${toolName}: when several pieces of work are independent, start their ` +
    `delegations together in one assistant message, then keep working while they run; each subagent's ` +
    'outcome arrives later as a notice. Use the foreground (run_in_background: false) only when your ' +
    'next action depends on the result.'
  );
}

/** Prompt-section name owned by an instance (SPEC §11.8). */
export function sectionName(toolName: string): string {
  return `tool:${toolName}`;
}
