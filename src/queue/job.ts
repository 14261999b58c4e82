/**
 * The job a parent queues per activation: everything else between a parent and a host travels on the
 * link between them (src/wire/protocol.ts frames over a Redis carrier).
 *
 * The version cells and the events flag a thread reads from shared memory cannot cross processes: the
 * job carries their values, later changes travel as `cells` frames, and the host keeps local cells its
 * threads read.
 */
import { z } from 'zod';
import { array, bool, int, object, optional, str } from '../declare.js';
import type { ModelProviderConfig } from '../models/types.js';
import type { DriverPlan } from '../wire/protocol.js';
import { driverPlan } from '../wire/protocol.js';

/**
 * A plan without its shared-memory cells: `cells` holds their values in the order events flag, step
 * cell, versions; `eventsFlag` and `stepCell` say whether the first two are there.
 */
export type RemotePlan = Omit<DriverPlan, 'eventsFlag' | 'versions' | 'stepCell'> & {
  cells: number[];
  eventsFlag: boolean;
  stepCell?: boolean;
};

const jobDataDecl = object({
  parent: str({ min: 1, max: 200 }),
  a: int('positive'),
  timeoutMs: int('positive'),
  models: str({ min: 32, max: 32 }),
  plan: object({ cells: array(int()), eventsFlag: bool(), stepCell: optional(bool()) }),
});
const MODELS_HASH = /^[0-9a-f]{32}$/;

/**
 * Whether a job's data is an activation (the compiled check: zod would copy the whole plan). The plan
 * itself is checked when the host rebuilds it (fromRemotePlan).
 */
export function isJobData(data: unknown): data is JobData {
  return jobDataDecl.check(data) && MODELS_HASH.test((data as { models: string }).models);
}

export interface JobData {
  parent: string;
  a: number;
  timeoutMs: number;
  /** The content hash of the runtime's model configs, stored once in Redis (modelsKey), not per job. */
  models: string;
  plan: RemotePlan;
  /** With a queueRunner secret, a queued job's HMAC (record-seal.ts); a placed one travels sealed already. */
  mac?: string;
}

/** Model provider configs as a host reads them back from Redis (plain data; adapters re-check their options). */
export const modelConfigsSchema = z.array(
  z.looseObject({
    id: z.string(),
    kind: z.string(),
    name: z.string(),
    models: z.array(z.unknown()),
    options: z.record(z.string(), z.unknown()),
  }),
);
export type ModelConfigs = ModelProviderConfig[];

export function cellsOf(plan: DriverPlan): Int32Array[] {
  return [plan.eventsFlag, plan.stepCell, ...plan.versions].filter((cell) => cell !== undefined);
}

export function readCells(cells: readonly Int32Array[]): number[] {
  return cells.map((cell) => Atomics.load(cell, 0));
}

export function toRemotePlan(plan: DriverPlan, cells: readonly Int32Array[]): RemotePlan {
  const { eventsFlag, stepCell, versions: _versions, ...rest } = plan;
  return { ...rest, eventsFlag: eventsFlag !== undefined, stepCell: stepCell !== undefined, cells: readCells(cells) };
}

/** The host's side: fresh local cells (its threads read them), the plan checked like any plan from a parent. */
export function fromRemotePlan(remote: RemotePlan): { plan: DriverPlan; cells: Int32Array[] } {
  const { cells: values, eventsFlag, stepCell, ...rest } = remote;
  const cells = values.map((value) => {
    const cell = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
    Atomics.store(cell, 0, value);
    return cell;
  });
  const versions = [...cells];
  const flag = eventsFlag ? versions.shift() : undefined;
  const step = stepCell === true ? versions.shift() : undefined;
  const candidate = { ...rest, versions, ...(flag ? { eventsFlag: flag } : {}), ...(step ? { stepCell: step } : {}) };
  const plan = driverPlan.parse(candidate, 'plan') as DriverPlan;
  return { plan, cells };
}

export function jobIdOf(parent: string, a: number): string {
  return `${parent}-${a}`;
}
