#!/usr/bin/env node
// Readiness probe for a local Kafka broker (used by test/infra/kafka.sh; tests that spawn
// `kafka.sh run-private` can use it too). Dependency-free: speaks the Kafka wire protocol.
//
//   node ready.cjs HOST PORT [SECONDS] [PID] [--warm]
//
// Sends a real Metadata request (v1) every 100 ms until the response lists at least one
// broker. A KRaft broker only lists itself once it has registered with the controller and
// been unfenced, so this is stronger than "the port is open".
// --warm then also waits until the broker can hand out a producer id (InitProducerId, what
// an idempotent producer does first) and has a group and a transaction coordinator
// (FindCoordinator, which creates __consumer_offsets and __transaction_state). On a fresh
// broker clients would otherwise start with retriable "coordinator is loading / not
// available" errors, which kafkajs logs at ERROR level and which slow the first test down.
// All request versions used here are non-flexible ones that Kafka 2.x to 4.x serve.
// Exit codes: 0 ready, 1 timed out, 2 the process PID exited first, 64 usage.
'use strict';
const net = require('net');

const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const [host = '127.0.0.1', portArg, secondsArg = '60', pidArg] = process.argv
  .slice(2)
  .filter((a) => !a.startsWith('--'));
const port = Number(portArg);
const deadline = Date.now() + Number(secondsArg) * 1000;
const pid = pidArg ? Number(pidArg) : 0;
const warm = flags.includes('--warm');
if (!port) {
  console.error('usage: ready.cjs HOST PORT [SECONDS] [PID] [--warm]');
  process.exit(64);
}

// --- encoding helpers (classic, non-flexible protocol) ---
const int8 = (v) => Buffer.from([v]);
const int16 = (v) => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(v);
  return b;
};
const int32 = (v) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(v);
  return b;
};
const str = (s) => (s === null ? int16(-1) : Buffer.concat([int16(Buffer.byteLength(s)), Buffer.from(s)]));

let correlationId = 0;
// One request on a fresh connection; resolves to the response body (after the header) or null.
function request(apiKey, version, body) {
  const cid = ++correlationId;
  const payload = Buffer.concat([int16(apiKey), int16(version), int32(cid), str('infra-ready'), body]);
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    const sock = net.connect({ host, port });
    const done = (result) => {
      sock.destroy();
      resolve(result);
    };
    sock.setTimeout(2000, () => done(null));
    sock.on('error', () => done(null));
    sock.on('close', () => done(null));
    sock.on('connect', () => sock.write(Buffer.concat([int32(payload.length), payload])));
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length < 4 || buf.length < 4 + buf.readInt32BE(0)) return;
      const res = buf.subarray(4, 4 + buf.readInt32BE(0));
      done(res.readInt32BE(0) === cid ? res.subarray(4) : null);
    });
  });
}

// Metadata v1 (topics: empty array) -> brokers[node_id, host, port, rack], controller_id, topics.
async function metadataBrokers() {
  const res = await request(3, 1, int32(0));
  if (!res) return null;
  let o = 0;
  const brokers = [];
  const count = res.readInt32BE(o);
  o += 4;
  for (let i = 0; i < count; i++) {
    const nodeId = res.readInt32BE(o);
    const hostLen = res.readInt16BE(o + 4);
    const h = res.toString('utf8', o + 6, o + 6 + hostLen);
    o += 6 + hostLen;
    const p = res.readInt32BE(o);
    const rackLen = res.readInt16BE(o + 4);
    o += 6 + Math.max(rackLen, 0);
    brokers.push(`${nodeId}@${h}:${p}`);
  }
  return brokers.length ? `brokers=${brokers.join(',')} controller=${res.readInt32BE(o)}` : null;
}

// InitProducerId v0 without transactional id -> throttle_time_ms, error_code, producer_id, epoch.
async function producerId() {
  const res = await request(22, 0, Buffer.concat([str(null), int32(60000)]));
  return res && res.readInt16BE(4) === 0 ? 'producerId' : null;
}

// FindCoordinator v1 (key, key_type 0 group / 1 transaction) -> throttle_time_ms, error_code, ...
async function coordinator(keyType, key) {
  const res = await request(10, 1, Buffer.concat([str(key), int8(keyType)]));
  return res && res.readInt16BE(4) === 0 ? `coordinator(${keyType})` : null;
}

function alive(p) {
  try {
    process.kill(p, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

async function until(check) {
  for (;;) {
    const ok = await check().catch(() => null);
    if (ok) return ok;
    if (pid && !alive(pid)) process.exit(2);
    if (Date.now() > deadline) {
      console.error(`timed out waiting for ${check.name} on ${host}:${port}`);
      process.exit(1);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

const started = Date.now();
const since = () => `${Date.now() - started} ms`;
(async () => {
  console.log(`${await until(metadataBrokers)} (after ${since()})`);
  if (warm) {
    await until(producerId);
    console.log(`producer ids ready (after ${since()})`);
    await until(function groupCoordinator() {
      return coordinator(0, 'infra-ready-warmup');
    });
    console.log(`group coordinator ready (after ${since()})`);
    await until(function transactionCoordinator() {
      return coordinator(1, 'infra-ready-warmup');
    });
    console.log(`transaction coordinator ready (after ${since()})`);
  }
  process.exit(0);
})();
