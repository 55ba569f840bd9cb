// Runs inside a pod of the cluster suite: a gRPC health check of ADDRESS (host:port) every 100 ms,
// each over a new connection, so every check goes through the Service's routing to whichever pod
// is ready. Prints {"ok":N,"failed":[...]} twice a second; the suite reads the last line.
// Dependency-free (node:http2 speaks gRPC's framing well enough for one unary call).
'use strict';
const http2 = require('node:http2');

const address = process.env.ADDRESS;
let ok = 0;
const failed = [];

function check() {
  return new Promise((resolve) => {
    const session = http2.connect(`http://${address}`);
    // How far a check that timed out got, and when it began: whether the connection or the answer stalled.
    const began = new Date().toISOString();
    let stage = 'connecting';
    session.once('connect', () => (stage = 'connected'));
    session.once('remoteSettings', () => (stage = 'settings received'));
    let settled = false;
    const done = (outcome) => {
      if (settled) return;
      settled = true;
      session.destroy();
      resolve(outcome);
    };
    session.on('error', (error) => done(error.code || error.message));
    session.setTimeout(2000, () => done(`timeout (${stage}; began ${began})`));
    const request = session.request({ ':method': 'POST', ':path': '/grpc.health.v1.Health/Check', 'content-type': 'application/grpc', te: 'trailers' });
    const chunks = [];
    let status;
    request.on('response', (headers) => {
      stage = 'headers received';
      status = headers['grpc-status'] ?? status;
    });
    request.on('trailers', (trailers) => (status = trailers['grpc-status']));
    request.on('data', (chunk) => chunks.push(chunk));
    // An empty HealthCheckRequest: uncompressed, length 0. SERVING is field 1 = 1 (08 01).
    request.on('end', () => done(status === '0' && Buffer.concat(chunks).subarray(5).equals(Buffer.from([8, 1])) ? 'ok' : `grpc-status ${status}`));
    request.on('error', (error) => done(error.code || error.message));
    request.end(Buffer.alloc(5));
  });
}

setInterval(() => console.log(JSON.stringify({ ok, failed })), 500);
(async () => {
  for (;;) {
    const outcome = await check();
    if (outcome === 'ok') ok++;
    else failed.push(`${new Date().toISOString()} ${outcome}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
})();
