/**
 * What a host reads from Redis besides batches: a config record must match the hash in its key, secret
 * or not, and with a secret carry the parent's seal; a queued job with a secret must carry a mac over
 * its data as BullMQ hands it back (parsed from the JSON it stored).
 */
import { describe, expect, it } from 'vitest';
import type { JobData } from '../../../src/queue/job.js';
import { jobAuthentic, modelsRecord, openModelsRecord, sealJob } from '../../../src/queue/record-seal.js';

const SECRET = 'record-seal-secret-0123456789';
const JSON_TEXT = JSON.stringify([{ kind: 'scripted', id: 'scripted', name: 'scripted', models: [], options: {} }]);
const JOB: JobData = {
  parent: `p${'a'.repeat(32)}`,
  a: 1,
  timeoutMs: 10_000,
  models: 'b'.repeat(32),
  plan: { cells: [0, 1], eventsFlag: true } as unknown as JobData['plan'],
};
/** What BullMQ hands a worker: the data parsed back from the JSON it stored. */
const throughBullmq = (data: JobData): JobData => JSON.parse(JSON.stringify(data)) as JobData;

describe('model config records', () => {
  it('without a secret: the bare JSON, read back only under its own hash', () => {
    const record = modelsRecord(JSON_TEXT, undefined);
    expect(record.body).toBe(JSON_TEXT);
    expect(openModelsRecord(record.hash, record.body, undefined)).toEqual({ json: JSON_TEXT });
    const other = modelsRecord('[]', undefined);
    expect(openModelsRecord(record.hash, other.body, undefined)).toEqual({ refused: 'do not match their hash' });
  });

  it('with a secret: read back only sealed, with the same secret, under the key it was sealed for', () => {
    const record = modelsRecord(JSON_TEXT, SECRET);
    expect(openModelsRecord(record.hash, record.body, SECRET)).toEqual({ json: JSON_TEXT });
    const refused = { refused: 'failed authentication' };
    expect(openModelsRecord(record.hash, JSON_TEXT, SECRET)).toEqual(refused);
    expect(openModelsRecord(record.hash, record.body, `${SECRET}-other`)).toEqual(refused);
    const other = modelsRecord('[]', SECRET);
    expect(openModelsRecord(other.hash, record.body, SECRET)).toEqual(refused);
  });
});

describe('queued jobs', () => {
  it('without a secret: unsealed, and taken as they are', () => {
    expect(sealJob(JOB, undefined)).toBe(JOB);
    expect(jobAuthentic(throughBullmq(JOB), undefined)).toBe(true);
  });

  it('with a secret: authentic through BullMQ; altered, unsealed or sealed with another secret, not', () => {
    const sealed = throughBullmq(sealJob(JOB, SECRET));
    expect(jobAuthentic(sealed, SECRET)).toBe(true);
    expect(jobAuthentic({ ...sealed, models: 'c'.repeat(32) }, SECRET)).toBe(false);
    expect(jobAuthentic(throughBullmq(JOB), SECRET)).toBe(false);
    expect(jobAuthentic(throughBullmq(sealJob(JOB, `${SECRET}-other`)), SECRET)).toBe(false);
  });
});
