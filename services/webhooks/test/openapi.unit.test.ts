import { describe, expect, it } from '@jest/globals';
import { ADMIN_EVENTS_PATH } from '../src/admin-events.js';
import { PAYMENT_WEBHOOK_PATH, SMS_WEBHOOK_PATH } from '../src/app.js';
import { PAYMENT_BODY_LIMIT_BYTES } from '../src/payments/payment-webhook.js';
import { SMS_BODY_LIMIT_BYTES } from '../src/sms/sms-webhook.js';
import { openapi } from './support/openapi-contract.js';
import { expectValidOpenApi31 } from '../../../test/support/openapi-contract.js';

describe('openapi.yaml', () => {
  it('should be a valid OpenAPI 3.1 document', async () => {
    await expectValidOpenApi31(openapi);
  });

  it('should document exactly the two webhook routes, POST only, and the admin API', () => {
    expect(Object.keys(openapi.paths).sort()).toEqual([PAYMENT_WEBHOOK_PATH, SMS_WEBHOOK_PATH, ADMIN_EVENTS_PATH, `${ADMIN_EVENTS_PATH}/{id}`, `${ADMIN_EVENTS_PATH}/{id}/replay`].sort());
    for (const path of [PAYMENT_WEBHOOK_PATH, SMS_WEBHOOK_PATH]) expect(Object.keys(openapi.paths[path]!)).toEqual(['post']);
    expect(Object.keys(openapi.paths[ADMIN_EVENTS_PATH]!)).toEqual(['get']);
    expect(Object.keys(openapi.paths[`${ADMIN_EVENTS_PATH}/{id}`]!)).toEqual(['get']);
    expect(Object.keys(openapi.paths[`${ADMIN_EVENTS_PATH}/{id}/replay`]!)).toEqual(['post']);
  });

  it('should put every admin operation behind the admin key, and document its 401', () => {
    for (const path of [ADMIN_EVENTS_PATH, `${ADMIN_EVENTS_PATH}/{id}`, `${ADMIN_EVENTS_PATH}/{id}/replay`]) {
      for (const operation of Object.values(openapi.paths[path]!)) {
        expect(operation.security).toEqual([{ adminKey: [] }]);
        expect(operation.responses['401']).toEqual({ $ref: '#/components/responses/AdminUnauthorized' });
      }
    }
  });

  it('should state the same body limits as the code', () => {
    expect(openapi.paths[PAYMENT_WEBHOOK_PATH]!.post!.requestBody!['x-max-body-bytes']).toBe(PAYMENT_BODY_LIMIT_BYTES);
    expect(openapi.paths[SMS_WEBHOOK_PATH]!.post!.requestBody!['x-max-body-bytes']).toBe(SMS_BODY_LIMIT_BYTES);
  });

  it('should document 401 and the code parameter on both routes', () => {
    for (const item of [openapi.paths[PAYMENT_WEBHOOK_PATH]!, openapi.paths[SMS_WEBHOOK_PATH]!]) {
      expect(Object.keys(item.post!.responses)).toEqual(expect.arrayContaining(['200', '401', '405', '413', '415']));
      expect(item.post!.parameters).toEqual(expect.arrayContaining([{ $ref: '#/components/parameters/Code' }]));
    }
  });
});
