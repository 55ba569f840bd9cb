// A well-behaved client of the cache in a thread of its own (bench/grpc-attacks.bench.ts): one Get
// at a time with a 2 ms pause, so it samples the latency others see rather than adds load, and so
// an attacker on the main thread cannot delay it. Messages: 'start', then 'stop' answered with
// { latencies, failures }.
import { parentPort, workerData } from 'node:worker_threads';
import { bufferSerializer, createCacheClient } from '@sp/cache-client';

const { address, key } = workerData as { address: string; key: string };
const client = createCacheClient<Buffer>({ address, deadlineMs: 10_000, retries: 0, coalesce: false }, bufferSerializer);
let running = false;
let latencies: number[] = [];
let failures = 0;

async function loop(): Promise<void> {
  while (running) {
    const started = performance.now();
    await client.get(key).then(
      () => latencies.push(performance.now() - started),
      () => failures++,
    );
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

let current: Promise<void> = Promise.resolve();
parentPort!.on('message', (message: string) => {
  if (message === 'start') {
    latencies = [];
    failures = 0;
    running = true;
    current = loop();
  } else if (message === 'stop') {
    running = false;
    void current.then(() => parentPort!.postMessage({ latencies, failures }));
  } else if (message === 'close') {
    client.close();
    parentPort!.close();
  }
});
