/** Child route precedence (SPEC §9 "Child route"). */
import { int, object, optional, str, zodShape } from '../declare.js';
import type { ModelRoute } from '../types.js';
import { lazy } from '../util/lazy.js';

/**
 * Merges a child's explicit `agentOptions` over the route it inherits (the parent's latest logged
 * request route, else its creation route — the caller picks which), field by field.
 *
 * Switching provider or model invalidates the inherited effort and output cap: they were chosen for a
 * different model (an effort it may not even list), so they are dropped and the new model's default
 * effort applies at `resolve()`. Anything named explicitly is kept as given. The result is partial
 * and unvalidated; pass it to `ModelCatalog.resolve()`.
 */
export function resolveChildRoute(
  explicit: Partial<ModelRoute> | undefined,
  inherited: ModelRoute,
): Partial<ModelRoute> {
  const given = explicit ?? {};
  const route: Partial<ModelRoute> = { ...inherited };
  for (const key of ['provider', 'model', 'reasoningEffort', 'maxTokens'] as const) {
    if (given[key] !== undefined) (route as Record<string, unknown>)[key] = given[key];
  }
  const switched =
    (given.provider !== undefined && given.provider !== inherited.provider) ||
    (given.model !== undefined && given.model !== inherited.model);
  if (switched) {
    if (given.reasoningEffort === undefined) delete route.reasoningEffort;
    if (given.maxTokens === undefined) delete route.maxTokens;
  }
  return route;
}

/**
 * The one declaration of a model route's fields (a loose object on the wire). Callers of the zod
 * shape choose the object's strictness: strict for API input (an unknown key is a caller bug), loose
 * for stored sessions (a newer writer may add fields).
 */
export const modelRoute = object({
  provider: str(),
  model: str(),
  reasoningEffort: optional(str()),
  maxTokens: optional(int('positive')),
});
/** Its zod shape, built on first use (src/util/lazy.ts): pool threads load this module but parse no route. */
export const modelRouteShape = lazy(() => zodShape(modelRoute));
