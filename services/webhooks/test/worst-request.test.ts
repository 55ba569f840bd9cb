import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { latencyUnderLoad } from '../../../test/support/latency-under-load.js';
import { cpuTimeMs, HANG_GUARD_MS } from '../../../test/support/progress.js';
import { PAYMENT_BODY_LIMIT_BYTES } from '../src/payments/payment-webhook.js';
import { SMS_BODY_LIMIT_BYTES } from '../src/sms/sms-webhook.js';
import { smsForm } from './support/webhooks-env.js';
import { hostileRequests, KINDS, startWebhooksUnderAttack, STRIPE_BODIES, type WebhooksUnderAttack } from './support/worst-requests.js';

/**
 * The most expensive requests the webhooks service accepts or refuses (support/worst-requests.ts),
 * against the service as a process of its own: each is answered as expected, costs the service
 * less than 50 ms of CPU, and other callers are answered throughout. Their p99 (within 100 ms of
 * the quiet p99) is make bench's target (bench/worst-request.bench.ts): a latency grows with the
 * machine's load, a test must not (issue 40).
 */
let service: WebhooksUnderAttack;

beforeAll(async () => {
  service = await startWebhooksUnderAttack();
}, HANG_GUARD_MS);

afterAll(async () => {
  await service?.close();
});

describe('the most expensive requests the webhooks service accepts or refuses', () => {
  it('should each be within the limits that define them, and be answered as expected', async () => {
    for (const { body } of STRIPE_BODIES) expect(Buffer.byteLength(body)).toBeLessThanOrEqual(PAYMENT_BODY_LIMIT_BYTES);
    const requests = hostileRequests(service.baseUrl, service.owner);
    expect(new URLSearchParams(smsForm(service.owner, '🍞'.repeat(1600))).toString().length).toBeLessThanOrEqual(SMS_BODY_LIMIT_BYTES);
    for (const request of requests.slice(0, KINDS)) {
      const answer = await fetch(request.url, { method: 'POST', headers: request.headers, body: request.body });
      expect([request.name, answer.status]).toEqual([request.name, request.status]);
    }
  });

  it('should hold the service\'s event loop less than 50 ms for any of them (CPU time of the service process per request)', async () => {
    const requests = hostileRequests(service.baseUrl, service.owner);
    const costs: Record<string, number> = {};
    for (let kind = 0; kind < KINDS; kind++) {
      const ofKind = requests.filter((_request, i) => i % KINDS === kind);
      const before = cpuTimeMs(service.pid)!;
      for (const request of ofKind) await (await fetch(request.url, { method: 'POST', headers: request.headers, body: request.body })).text();
      costs[ofKind[0]!.name] = Number(((cpuTimeMs(service.pid)! - before) / ofKind.length).toFixed(1));
    }
    process.stdout.write(`webhooks worst request, service CPU ms per request: ${JSON.stringify(costs)}\n`);
    // CPU time, not wall time: it does not grow with the machine's load. A body nested 128k deep
    // cost ~200 ms before it was refused unparsed.
    for (const [name, ms] of Object.entries(costs)) expect([name, ms < 50]).toEqual([name, true]);
  });

  it("should answer other callers' every request while they run back to back", async () => {
    const attacker = service.attacker();
    try {
      const result = await latencyUnderLoad({ probe: () => service.probe(), hostile: [() => attacker.request()], samples: 200, servicePid: service.pid });
      // Visible in the test output: the figures behind the verdict.
      process.stdout.write(`webhooks worst request: ${JSON.stringify(result)}\n`);
      // The probes ran among the hostile requests, and each probe and hostile request was answered as expected.
      expect(result.hostileCompleted).toBeGreaterThanOrEqual(KINDS);
      // CPU time, not wall time: how long a request can hold the event loop, whatever the machine's load.
      expect(result.serviceCpuMsPerHostile).toBeLessThan(50);
    } finally {
      await attacker.close();
    }
  }, 180_000);
});
