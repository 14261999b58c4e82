/**
 * What brood needs of an AI SDK LanguageModel, recognised by its shape: `@ai-sdk/provider` is not a
 * dependency of brood, and a model built by another copy of the package would fail an `instanceof`.
 */

/** The LanguageModel specification versions `@ai-sdk/provider` 2.x–4.x define. */
export const SPEC_VERSIONS = ['v2', 'v3', 'v4'] as const;
export type SpecVersion = (typeof SPEC_VERSIONS)[number];

export interface LanguageModelLike {
  readonly specificationVersion: SpecVersion;
  readonly provider: string;
  readonly modelId: string;
  doStream(options: Record<string, unknown>): PromiseLike<{ stream: ReadableStream<unknown> }>;
}

/** Why `value` is not a usable LanguageModel, or undefined when it is one. */
export function languageModelProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return `not a LanguageModel (got ${describeValue(value)})`;
  const { specificationVersion, doStream } = value as { specificationVersion?: unknown; doStream?: unknown };
  if (typeof specificationVersion !== 'string')
    return 'not a LanguageModel (no specificationVersion; a model id string is not a model object)';
  if (!(SPEC_VERSIONS as readonly string[]).includes(specificationVersion))
    return `LanguageModel specification version '${specificationVersion}' is not supported (brood supports ${SPEC_VERSIONS.join(', ')})`;
  if (typeof doStream !== 'function') return 'not a LanguageModel (no doStream function)';
  return undefined;
}

export function isLanguageModel(value: unknown): value is LanguageModelLike {
  return languageModelProblem(value) === undefined;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  return typeof value;
}
