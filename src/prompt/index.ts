/** The prompt module's surface for the rest of brood (src/index.ts curates what is public). */
export {
  BUILTIN_VARIABLES,
  createPromptSystem,
  PERSONA_ORDER,
  PERSONA_SECTION,
  type PromptScope,
  type PromptScopeOptions,
  type PromptSystem,
  type PromptSystemOptions,
  registerPersona,
} from './system.js';
export { isValidVariableName, renderTemplate, type TemplateLocation, type VariableLookup } from './template.js';
