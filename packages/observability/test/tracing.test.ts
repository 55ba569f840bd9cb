import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { startOtlpReceiver, type OtlpReceiver } from '../../../test/support/otlp-receiver.js';

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
let collector: OtlpReceiver;

beforeEach(async () => {
  collector = await startOtlpReceiver();
});
afterEach(() => collector.close());

async function runFixture(env: Record<string, string>): Promise<{ body: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['--import', fixture('traced-instrument.ts'), fixture('traced-server.ts')], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  const { port } = JSON.parse(line) as { port: number };
  const body = await (await fetch(`http://127.0.0.1:${port}/hello`)).text();
  return {
    body,
    stop: async () => {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

describe('tracing bootstrap', () => {
  it('should export one trace spanning the inbound request, the outbound call and the downstream handler when Otlp__Endpoint is set', async () => {
    const run = await runFixture({ Otlp__Endpoint: collector.url });
    expect(run.body).toBe('hello downstream');
    await run.stop(); // SIGTERM right after the request: the platform's shutdown must flush the batch
    const { spans } = collector;
    expect(spans.map((span) => span.service)).toContain('traced-fixture');
    const [root] = spans.filter((span) => span.kind === 2 && span.parentSpanId === undefined);
    expect(root).toBeDefined();
    const trace = spans.filter((span) => span.traceId === root!.traceId);
    expect(trace.map((span) => span.kind).sort()).toEqual([2, 2, 3]); // server, server, client
    const client = trace.find((span) => span.kind === 3)!;
    expect(client.parentSpanId).toBe(root!.spanId);
    expect(trace.find((span) => span.kind === 2 && span !== root)!.parentSpanId).toBe(client.spanId);
  });

  it('should export nothing when Otlp__Endpoint is unset', async () => {
    const run = await runFixture({ Otlp__Endpoint: '' });
    expect(run.body).toBe('hello downstream');
    await run.stop();
    expect(collector.spans).toEqual([]);
    expect(collector.rejected).toEqual([]);
  });
});
