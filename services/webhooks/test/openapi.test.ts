import { describe, expect, it } from '@jest/globals';
import { PAYMENT_WEBHOOK_PATH, SMS_WEBHOOK_PATH } from '../src/app.js';
import { PAYMENT_BODY_LIMIT_BYTES } from '../src/payment-webhook.js';
import { SMS_BODY_LIMIT_BYTES } from '../src/sms-webhook.js';
import { openapi } from './support/openapi-contract.js';
import { expectValidOpenApi31 } from '../../../test/support/openapi-contract.js';

describe('openapi.yaml', () => {
  it('should be a valid OpenAPI 3.1 document', async () => {
    await expectValidOpenApi31(openapi);
  });

  it('should document exactly the two webhook routes, POST only', () => {
    expect(Object.keys(openapi.paths).sort()).toEqual([PAYMENT_WEBHOOK_PATH, SMS_WEBHOOK_PATH].sort());
    for (const item of Object.values(openapi.paths)) expect(Object.keys(item)).toEqual(['post']);
  });

  it('should state the same body limits as the code', () => {
    expect(openapi.paths[PAYMENT_WEBHOOK_PATH]!.post!.requestBody!['x-max-body-bytes']).toBe(PAYMENT_BODY_LIMIT_BYTES);
    expect(openapi.paths[SMS_WEBHOOK_PATH]!.post!.requestBody!['x-max-body-bytes']).toBe(SMS_BODY_LIMIT_BYTES);
  });

  it('should document 401 and the code parameter on both routes', () => {
    for (const item of Object.values(openapi.paths)) {
      expect(Object.keys(item.post!.responses)).toEqual(expect.arrayContaining(['200', '401', '405', '413', '415']));
      expect(item.post!.parameters).toEqual(expect.arrayContaining([{ $ref: '#/components/parameters/Code' }]));
    }
  });
});
