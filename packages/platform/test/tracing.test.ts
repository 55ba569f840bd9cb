import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { closeGracefully, listen } from '../src/http-server.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
}
interface OtlpRequest {
  resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> }; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
}

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const received: OtlpRequest[] = [];
const collector = createServer((req: IncomingMessage, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    if (req.url === '/v1/traces' && req.headers['content-type']?.startsWith('application/json')) received.push(JSON.parse(body) as OtlpRequest);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
let collectorUrl = '';

beforeAll(async () => {
  collectorUrl = `http://127.0.0.1:${await listen(collector, 0, '127.0.0.1')}`;
});
afterAll(() => closeGracefully(collector, 100));

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

const spansOf = (requests: OtlpRequest[]): OtlpSpan[] => requests.flatMap((r) => r.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));

describe('tracing bootstrap', () => {
  it('should export one trace spanning the inbound request, the outbound call and the downstream handler when Otlp__Endpoint is set', async () => {
    const run = await runFixture({ Otlp__Endpoint: collectorUrl });
    expect(run.body).toBe('hello downstream');
    await run.stop(); // SIGTERM right after the request: the platform's shutdown must flush the batch
    const spans = spansOf(received);
    const serviceNames = received.flatMap((r) => r.resourceSpans.flatMap((rs) => rs.resource.attributes.filter((a) => a.key === 'service.name').map((a) => a.value.stringValue)));
    expect(serviceNames).toContain('traced-fixture');
    const [root] = spans.filter((span) => span.kind === 2 && span.parentSpanId === undefined);
    expect(root).toBeDefined();
    const trace = spans.filter((span) => span.traceId === root!.traceId);
    expect(trace.map((span) => span.kind).sort()).toEqual([2, 2, 3]); // server, server, client
    const client = trace.find((span) => span.kind === 3)!;
    expect(client.parentSpanId).toBe(root!.spanId);
    expect(trace.find((span) => span.kind === 2 && span !== root)!.parentSpanId).toBe(client.spanId);
  });

  it('should export nothing when Otlp__Endpoint is unset', async () => {
    received.length = 0;
    const run = await runFixture({ Otlp__Endpoint: '' });
    expect(run.body).toBe('hello downstream');
    await run.stop();
    expect(received).toEqual([]);
  });
});
