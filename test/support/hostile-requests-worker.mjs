// Sends prepared requests back to back, in a worker thread of its own, until told to stop: the
// hostile side of a "worst request" check, kept off the event loop of the test that measures the
// other callers. workerData: { requests: [{ url, method, headers, body, status }], concurrency }.
// Posts { sent, failure } when stopped; failure names a request answered with another status.
import { parentPort, workerData } from 'node:worker_threads';

const { requests, concurrency } = workerData;
let stop = false;
let sent = 0;
let failure;
parentPort.on('message', () => {
  stop = true;
});

async function loop() {
  while (!stop && failure === undefined) {
    const request = requests[sent % requests.length];
    sent++;
    const response = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body });
    const text = await response.text();
    if (response.status !== request.status) failure = `${request.name}: answered ${response.status} (expected ${request.status}): ${text.slice(0, 200)}`;
  }
}

await Promise.all(Array.from({ length: concurrency }, () => loop().catch((err) => (failure = String(err)))));
parentPort.postMessage({ sent, failure });
