/** The model route of every scripted test agent: the `scripted` provider's `scripted` model. */
export const route = { provider: 'scripted', model: 'scripted' } as const;
