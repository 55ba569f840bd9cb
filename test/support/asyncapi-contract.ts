import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';
import type { PlatformEventType } from '@sp/messaging';

/** The project's AsyncAPI document, the contract of the events the services publish. */
const asyncapiPath = fileURLToPath(new URL('../../docs/asyncapi.yaml', import.meta.url));
const document = parse(readFileSync(asyncapiPath, 'utf8')) as { components: { messages: Record<string, { payload: object }> } };
const ajv = new Ajv2020({ strict: false, allErrors: true });
// ajv-formats is CommonJS: imported from ES modules its default export is module.exports, whose `default` is the plugin.
addFormatsModule.default(ajv);

/** The messages docs/asyncapi.yaml defines. */
export const asyncapiMessages = (): string[] => Object.keys(document.components.messages);

/** Fails unless `value` is a valid payload of the named message of docs/asyncapi.yaml. */
export function expectEventPayload(message: PlatformEventType, value: unknown): void {
  const schema = document.components.messages[message]?.payload;
  expect(schema).toBeDefined();
  const validate = ajv.compile(schema!);
  const valid = validate(value);
  expect(valid ? [] : validate.errors).toEqual([]);
}
