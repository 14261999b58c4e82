/**
 * Content parts in an AI SDK prompt: images and files are `file` parts (base64 text; an https: URL a URL
 * object only at the call, so the options stay plain data for the proxied shape); a tool result's
 * image follows its results as a user message's file part.
 */
import { expect, it } from 'vitest';
import { callOptionsFor, withUrlObjects } from '../../../src/models/ai-sdk/call-options.js';
import { assistant, makeRequest } from './helpers.js';

const image = { type: 'image' as const, data: 'iVBORw0KGgo=', mediaType: 'image/png' };
const pdfByUrl = {
  type: 'file' as const,
  data: 'https://example.com/a.pdf',
  mediaType: 'application/pdf',
  filename: 'a.pdf',
};

it("a user message's parts are text and file parts; withUrlObjects makes an https: URL a URL", () => {
  const request = makeRequest([
    { role: 'user', text: 'look', parts: [{ type: 'text', text: 'look' }, image, pdfByUrl] },
  ]);
  const { options } = callOptionsFor(request, undefined, 'v3');
  const content = [
    { type: 'text', text: 'look' },
    { type: 'file', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
    { type: 'file', data: 'https://example.com/a.pdf', mediaType: 'application/pdf', filename: 'a.pdf' },
  ];
  expect(options.prompt).toEqual([{ role: 'user', content }]);
  expect(structuredClone(options)).toEqual(options); // plain data: crosses to the parent as it is
  const [message] = withUrlObjects(options).prompt as { content: { data: unknown }[] }[];
  expect(message?.content[2]?.data).toEqual(new URL('https://example.com/a.pdf'));
  expect(message?.content[1]?.data).toBe('iVBORw0KGgo=');
});

it("a tool result's image follows the results as a user message's file part", () => {
  const request = makeRequest([
    { role: 'user', text: 'draw' },
    assistant('', [{ callId: 'c1', name: 'chart', arguments: '{}' }]),
    { role: 'tool', callId: 'c1', name: 'chart', content: '[image: image/png]', isError: false, parts: [image] },
  ]);
  const prompt = callOptionsFor(request, undefined, 'v3').options.prompt as { role: string; content: unknown[] }[];
  expect(prompt.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'user']);
  expect(prompt[3]?.content).toEqual([
    { type: 'text', text: 'The media returned by the tool results above:' },
    { type: 'file', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
  ]);
});
