import { customAlphabet } from 'nanoid';

/** Lowercase alphanumeric ids read well in transcripts and file names. */
const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';
const randomId = customAlphabet(alphabet, 12);

export type IdGenerator = (prefix: string) => string;

export const defaultIds: IdGenerator = (prefix) => `${prefix}_${randomId()}`;
