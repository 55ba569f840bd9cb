// The cache service's most expensive requests, shared by test/worst-request.test.ts (what a user
// notices: every other caller answered, each request cheap in CPU) and make bench
// (bench/worst-request.bench.ts: the other caller's p99 against its target).
import { connect, constants as h2, type ClientHttp2Stream } from 'node:http2';
import { setTimeout as sleep } from 'node:timers/promises';
import { status } from '@grpc/grpc-js';
import { cacheServiceDefinition } from '@sp/cache-client';
import { GRPC_REQUEST, hostileWorker } from '../../../test/support/hostile-worker.js';
import { rawCall, rawClient, requestWithKeyBytes, type RawClient } from './cache-fixture.js';
import { MAX_CONCURRENT_STREAMS } from '../src/server.js';

const MiB = 1024 * 1024;

/** One kind of hostile request: its name, and a maker of the function sending one (made once per run). */
export type WorstRequest = [name: string, make: () => () => Promise<void>];

/**
 * The most expensive requests the cache service at `address` accepts or refuses, each to be sent
 * again and again by one caller (a worker thread, off the probes' event loop): a value of exactly
 * the largest size (1 MiB), a message over it, a key that is not UTF-8, and a connection that
 * keeps every stream it may open busy. `closers` collects what to close after.
 */
export function cacheWorstRequests(address: string, closers: Array<() => void>): WorstRequest[] {
  /** A Set of these request bytes, sent again and again from a worker thread, expecting `code`. */
  const fromWorker = (request: Buffer, code: status): (() => Promise<void>) => {
    const worker = hostileWorker(GRPC_REQUEST, { address, path: cacheServiceDefinition().Set.path, request: request.toString('base64'), code });
    closers.push(() => void worker.close());
    return () => worker.request();
  };

  /** Opens every stream one connection may have, each with a request it never finishes, then lets them go. */
  const holdAllStreams = async (): Promise<void> => {
    const session = connect(`http://${address}`);
    session.on('error', () => undefined);
    try {
      const streams: ClientHttp2Stream[] = Array.from({ length: MAX_CONCURRENT_STREAMS }, () => {
        const stream = session.request({ [h2.HTTP2_HEADER_METHOD]: 'POST', [h2.HTTP2_HEADER_PATH]: cacheServiceDefinition().Get.path, [h2.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc', te: 'trailers' });
        stream.on('error', () => undefined);
        stream.write(Buffer.from([0, 0, 0, 4, 0]));
        return stream;
      });
      await sleep(200);
      for (const stream of streams) stream.close(h2.NGHTTP2_CANCEL);
    } finally {
      session.destroy();
    }
  };

  return [
    ['a Set of the largest value (1 MiB)', () => fromWorker(requestWithKeyBytes(Buffer.from('largest'), Buffer.alloc(MiB, 7)), status.OK)],
    ['a message over the largest value (refused)', () => fromWorker(requestWithKeyBytes(Buffer.from('oversized'), Buffer.alloc(MiB + 8192, 7)), status.RESOURCE_EXHAUSTED)],
    ['a key that is not UTF-8 (refused)', () => fromWorker(requestWithKeyBytes(Buffer.from([0xff, 0xfe]), Buffer.from('v')), status.INVALID_ARGUMENT)],
    [`a connection holding all ${MAX_CONCURRENT_STREAMS} streams it may open`, () => holdAllStreams],
  ];
}

/**
 * Another caller of the cache at `address`, on a connection of its own: a Get of a small value it
 * set, which must be found (it throws otherwise). `clients` collects what to close after.
 */
export async function cacheProbe(address: string, clients: RawClient[]): Promise<() => Promise<void>> {
  const client = rawClient(address, { 'grpc.use_local_subchannel_pool': 1 });
  clients.push(client);
  await rawCall(client, 'Set', { key: 'probe', value: Buffer.from('small') });
  return async () => {
    if (!(await rawCall(client, 'Get', { key: 'probe' })).found) throw new Error('the probe key was not found');
  };
}
