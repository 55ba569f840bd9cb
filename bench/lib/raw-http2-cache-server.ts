// A floor experiment, not a server to copy: Get and Set of cache.v1.CacheGrpcService answered by
// hand on Node's own HTTP/2 (node:http2's public API), with no gRPC library at all. Each request is
// one 5-byte length-prefixed message (compressed flag, big-endian length) decoded by protobufjs
// from the same proto; the answer is headers, one framed message and a `grpc-status: 0` trailer.
// An in-memory map, as the grpc-go peer keeps. No deadlines, metadata, compression, flow-control
// tuning or error mapping: what is left is what any Node gRPC server pays per call at least, so
// its CPU per call is the floor a Node server can reach against grpc-go's on this machine.
import http2 from 'node:http2';
import protobuf from 'protobufjs';
import { cacheProtoPath } from '@sp/cache-client';

const root = protobuf.loadSync(cacheProtoPath);
const CacheRequest = root.lookupType('cache.v1.CacheRequest');
const CacheResponse = root.lookupType('cache.v1.CacheResponse');

interface Request {
  key: string;
  value: Uint8Array;
  ttlMs: number | { toNumber(): number };
}
interface Entry {
  value: Uint8Array;
  expiresAt: number;
}

const entries = new Map<string, Entry>();
const EMPTY = new Uint8Array(0);
const MISS = { found: false, value: EMPTY, expiresAtUnixMs: 0 };

const methods: Record<string, (request: Request) => object> = {
  '/cache.v1.CacheGrpcService/Get': ({ key }) => {
    const entry = entries.get(key);
    if (entry === undefined || (entry.expiresAt !== 0 && entry.expiresAt <= Date.now())) return MISS;
    return { found: true, value: entry.value, expiresAtUnixMs: entry.expiresAt };
  },
  '/cache.v1.CacheGrpcService/Set': ({ key, value, ttlMs }) => {
    const ttl = typeof ttlMs === 'number' ? ttlMs : ttlMs.toNumber();
    const expiresAt = ttl > 0 ? Date.now() + ttl : 0;
    entries.set(key, { value, expiresAt });
    return { found: true, value: EMPTY, expiresAtUnixMs: expiresAt };
  },
};

const RESPONSE_HEADERS = { ':status': 200, 'content-type': 'application/grpc' };
const OK_TRAILERS = { 'grpc-status': '0' };

/** The 5-byte gRPC message prefix (uncompressed) and the message. */
function framed(message: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(5 + message.length);
  frame[0] = 0;
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame;
}

const server = http2.createServer();
server.on('stream', (stream, headers) => {
  const method = methods[String(headers[':path'])];
  if (method === undefined) {
    stream.respond({ ...RESPONSE_HEADERS, 'grpc-status': '12' }, { endStream: true });
    return;
  }
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => {
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    const request = CacheRequest.decode(body.subarray(5, 5 + body.readUInt32BE(1))) as unknown as Request;
    const reply = CacheResponse.encode(method(request)).finish();
    stream.respond(RESPONSE_HEADERS, { waitForTrailers: true });
    stream.once('wantTrailers', () => stream.sendTrailers(OK_TRAILERS));
    stream.end(framed(reply));
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address !== null ? address.port : ''}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  process.exit(0);
});
