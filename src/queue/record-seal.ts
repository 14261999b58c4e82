/**
 * What a host reads from Redis besides channel batches — BullMQ jobs and the model configs they name
 * by content hash — checked before it is used, the way batches are (batch-seal.ts):
 *
 * - The configs are stored under the hash of their JSON text, and a host recomputes it on every read:
 *   a record that does not match its key is refused, secret or not.
 * - With a secret, both carry an HMAC-SHA256 (the configs as `<mac>\n<json>`, a job in its `mac`
 *   field), over their own destination (`models:<hash>`, `job`) so neither passes for the other or
 *   for a batch. One without a valid mac is refused. Without a secret nothing is sealed.
 */
import { createHash } from 'node:crypto';
import { batchSeal } from './batch-seal.js';
import type { JobData } from './job.js';

/** The record of a runtime's model configs: its key's hash and the text stored there. */
export interface ModelsRecord {
  hash: string;
  body: string;
}

export function modelsRecord(json: string, secret: string | undefined): ModelsRecord {
  const hash = contentHash(json);
  // Unsealed, the record is the bare JSON (JSON.stringify writes no newline, so no mac line is read).
  const body = secret === undefined ? json : batchSeal(secret).seal(modelsDestination(hash), json);
  return { hash, body };
}

/** The JSON text of a record read from the key of `hash`, or why it is refused. */
export function openModelsRecord(
  hash: string,
  body: string,
  secret: string | undefined,
): { json: string } | { refused: string } {
  const json = batchSeal(secret).open(modelsDestination(hash), body);
  if (json === undefined) return { refused: 'failed authentication' };
  if (contentHash(json) !== hash) return { refused: 'do not match their hash' };
  return { json };
}

/** A job as queued: with a secret, its mac over the job's JSON text. */
export function sealJob(data: JobData, secret: string | undefined): JobData {
  if (secret === undefined) return data;
  return { ...data, mac: macOf(secret, JSON.stringify(data)) };
}

/**
 * Whether a job taken from BullMQ may run: always without a secret; with one, when its mac is that
 * of the rest of the job. BullMQ hands the data back parsed from the JSON it stored, whose keys keep
 * their order, so the rest stringifies to the text the parent sealed.
 */
export function jobAuthentic(data: JobData, secret: string | undefined): boolean {
  if (secret === undefined) return true;
  const { mac, ...rest } = data;
  if (typeof mac !== 'string') return false;
  return batchSeal(secret).open(JOB_DESTINATION, `${mac}\n${JSON.stringify(rest)}`) !== undefined;
}

const JOB_DESTINATION = 'job';

function macOf(secret: string, payload: string): string {
  const sealed = batchSeal(secret).seal(JOB_DESTINATION, payload);
  return sealed.slice(0, sealed.indexOf('\n'));
}

function modelsDestination(hash: string): string {
  return `models:${hash}`;
}

function contentHash(json: string): string {
  return createHash('sha256').update(json).digest('hex').slice(0, 32);
}
