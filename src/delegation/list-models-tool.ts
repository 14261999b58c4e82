/**
 * list_subagent_models (SPEC §11.9): read-only catalog discovery at call time. The delegation tool's
 * schema never enumerates the catalog (prefix stability); this tool is where the model looks it up.
 * One owner per runtime, because the name is global.
 */
import { z } from 'zod';
import { BroodError } from '../errors.js';
import type { ModelCatalog } from '../models/catalog.js';
import { defineTool } from '../tools/define-tool.js';
import type { Agent, ToolDefinition, ToolPresentation } from '../types.js';

export const LIST_MODELS_TOOL = 'list_subagent_models';

const listArgs = z.object({
  provider: z.string().optional().describe('A provider id: list its models.'),
  model: z.string().optional().describe("With provider: show this model's reasoning efforts and default."),
});

/** `visible` decides per agent (settings-controlled instances show it only to enabled sessions). */
export function listModelsTool(catalog: ModelCatalog, visible: (agent: Agent | undefined) => boolean): ToolDefinition {
  return defineTool({
    name: LIST_MODELS_TOOL,
    description:
      'List what a subagent can run on: with no arguments the model providers, with provider that ' +
      "provider's models, with provider and model that model's reasoning efforts and default.",
    parameters: listArgs,
    concurrencySafe: true,
    execute: (args) => listModels(catalog, args),
    forAgent: (agent): ToolPresentation => (visible(agent) ? {} : false),
  });
}

export function listModels(
  catalog: ModelCatalog,
  args: { provider?: string | undefined; model?: string | undefined },
): string {
  if (args.provider === undefined) {
    if (args.model !== undefined)
      throw new BroodError('INVALID_ARGS', "model needs provider: give both to see a model's efforts");
    const providers = catalog.providers();
    return providers.length === 0 ? '(no model providers)' : providers.map((p) => `${p.id} — ${p.name}`).join('\n');
  }
  const models = catalog.models(args.provider); // UNKNOWN_MODEL for an unknown provider
  if (args.model === undefined) {
    return models.length === 0 ? `(provider ${args.provider} lists no models)` : models.map((m) => m.id).join('\n');
  }
  return describeModel(catalog, args.provider, args.model, models);
}

function describeModel(
  catalog: ModelCatalog,
  provider: string,
  model: string,
  models: { id: string; efforts: string[]; defaultEffort?: string }[],
): string {
  const info = models.find((m) => m.id === model);
  if (info === undefined) {
    // resolve() decides whether an unlisted id is acceptable (acceptsUnlistedModels) and throws otherwise.
    catalog.resolve({ provider, model });
    return `model ${model} is not listed by ${provider}, which accepts unlisted models; its efforts are not advertised`;
  }
  if (info.efforts.length === 0) return `model ${provider}/${model} has no reasoning efforts`;
  const fallback = info.defaultEffort === undefined ? 'none' : info.defaultEffort;
  return `efforts: ${info.efforts.join(', ')}\ndefault: ${fallback}`;
}
