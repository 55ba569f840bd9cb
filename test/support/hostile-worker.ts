import { Worker } from 'node:worker_threads';

/** One hostile request at a time, sent from a worker thread, and how to stop it. */
export interface HostileWorker {
  /** Sends one request from the worker; rejects when it did not get the answer expected. */
  request(): Promise<void>;
  close(): Promise<number>;
}

/**
 * Runs a hostile caller in a worker thread, so that building and sending its costly requests (a
 * 1 MiB body encrypted for TLS, say) does not delay the test's own probes, which run on the main
 * thread as another caller's would in another process. `factory` is plain JavaScript source (it is
 * not transformed): a function of `data` that returns the function sending one request, which
 * resolves when the answer is the one expected and rejects otherwise. `require` resolves from the
 * repository root.
 */
export function hostileWorker(factory: string, data: unknown): HostileWorker {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const send = (${factory})(workerData);
     parentPort.on('message', () => send().then(() => parentPort.postMessage({ ok: true }), (err) => parentPort.postMessage({ ok: false, error: String((err && err.stack) || err) })));`,
    { eval: true, workerData: data },
  );
  let pending: { resolve: () => void; reject: (err: Error) => void } | undefined;
  worker.on('message', (message: { ok: boolean; error?: string }) => {
    const waiting = pending;
    pending = undefined;
    if (message.ok) waiting?.resolve();
    else waiting?.reject(new Error(message.error));
  });
  worker.on('error', (err: Error) => pending?.reject(err));
  return {
    request: () =>
      new Promise<void>((resolve, reject) => {
        pending = { resolve, reject };
        worker.postMessage('send');
      }),
    close: () => worker.terminate(),
  };
}

/**
 * An HTTPS request over one keep-alive connection that trusts any certificate (the service's
 * self-signed one), expecting `status`.
 */
export const HTTPS_REQUEST = `(d) => {
  const https = require('node:https');
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
  const body = d.body === undefined ? undefined : Buffer.from(d.body, 'base64');
  return () => new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: d.port, path: d.path, method: d.method, headers: d.headers, agent }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === d.status ? resolve() : reject(new Error('answered ' + res.statusCode + ', expected ' + d.status))));
    });
    req.on('error', reject);
    req.end(body);
  });
}`;

/** A unary gRPC call of already encoded request bytes on a connection of its own, expecting status `code`. */
export const GRPC_REQUEST = `(d) => {
  const grpc = require('@grpc/grpc-js');
  const client = new grpc.Client(d.address, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
  const request = Buffer.from(d.request, 'base64');
  return () => new Promise((resolve, reject) => {
    client.makeUnaryRequest(d.path, (bytes) => bytes, (bytes) => bytes, request, (err) => {
      const code = err ? err.code : 0;
      if (code === d.code) resolve();
      else reject(new Error('status ' + code + ', expected ' + d.code));
    });
  });
}`;
