import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import { infra } from '../../../test/support/infra.js';

const run = promisify(execFile);
const fixture = fileURLToPath(new URL('./fixtures/idle-kafka-producer.ts', import.meta.url));

interface IdleReport {
  warnings: string[];
  timersCreatedWhileIdle: number;
  idleCpuMicros: number;
  idleMs: number;
}

/** Publishers that published once, then idled for `idleMs`, in a fresh process (see the fixture). */
async function idleProducers(publishers: number, idleMs: number): Promise<IdleReport> {
  const env = { ...process.env, KAFKA_BROKERS: infra('KAFKA_BROKERS'), TOPIC: `platform-idle-${randomUUID()}`, PUBLISHERS: String(publishers), IDLE_MS: String(idleMs) };
  const { stdout } = await run(process.execPath, [fixture], { env, timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as IdleReport;
}

// kafkajs 2.2.4 re-armed a timer every 1 ms on each broker connection once its first request was
// answered, with a delay computed from a throttle end that was never set (-1 - Date.now()): Node
// warned (TimeoutNegativeWarning) and an idle service spent ~3% of a core on it. patches/ fixes it
// at install (see the README, "Patched dependencies").
describe('an idle Kafka producer (real broker, patched kafkajs)', () => {
  it('should emit no process warning and keep no timer re-arming while idle', async () => {
    const report = await idleProducers(2, 3000);
    expect(report.warnings).toEqual([]);
    // Unpatched: ~500-1,000 a second per connection. Patched: none, or a stray one of the
    // publishers' own (idle connections arm nothing).
    expect(report.timersCreatedWhileIdle).toBeLessThan(20);
  }, 90_000);
});
