/** The `ai-sdk` kind's adapter, in whichever thread runs the driver: module-built or proxied models. */
import type { ModelAdapter, ModelInfo, ModelProviderConfig } from '../types.js';
import { callOptionsFor, withUrlObjects } from './call-options.js';
import type { LanguageModelLike } from './language-model.js';
import { type Importer, moduleModel } from './module-model.js';
import { aiSdkOptionsOf } from './options.js';
import type { ProxyCall } from './proxy-server.js';
import { proxiedSource } from './proxy-source.js';
import { requestThrough, type StreamSource } from './request.js';

export function createAiSdkAdapter(config: ModelProviderConfig, importModule: Importer): ModelAdapter {
  const { shape, retry } = aiSdkOptionsOf(config);
  const infos = new Map<string, ModelInfo>(config.models.map((m) => [m.id, m]));
  if (shape === 'proxy') {
    return {
      request: (request) => {
        // Planned as for v4; the parent drops the reasoning option for an older model, and says so.
        const plan = callOptionsFor(request, infos.get(request.route.model), 'v4');
        const call = request.modelProxy as ((call: ProxyCall) => Promise<unknown>) | undefined;
        const source = proxiedSource(config.id, request.route.model, call, plan.notes);
        return requestThrough(source, plan, request, retry);
      },
    };
  }
  // One model per id per thread, built on first use; a failed build is not kept (the next request retries).
  const models = new Map<string, Promise<LanguageModelLike>>();
  const modelFor = (id: string): Promise<LanguageModelLike> => {
    let model = models.get(id);
    if (model === undefined) {
      model = moduleModel(config, id, importModule);
      models.set(id, model);
      model.catch(() => models.delete(id));
    }
    return model;
  };
  return {
    request: async (request) => {
      const model = await modelFor(request.route.model);
      const plan = callOptionsFor(request, infos.get(request.route.model), model.specificationVersion);
      return requestThrough(directSource(model), plan, request, retry);
    },
  };
}

function directSource(model: LanguageModelLike): StreamSource {
  return {
    open: async (options, signal) => {
      const { stream } = await model.doStream({ ...withUrlObjects(options), abortSignal: signal });
      return stream as unknown as AsyncIterable<{ type?: unknown } & Record<string, unknown>>;
    },
  };
}
