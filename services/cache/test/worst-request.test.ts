import { connect, constants as h2, type ClientHttp2Stream } from 'node:http2';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { status } from '@grpc/grpc-js';
import { cacheServiceDefinition } from '@sp/cache-client';
import { latencyUnderLoad } from '../../../test/support/latency-under-load.js';
import { buildService } from '../../../test/deploy/support/build.js';
import { serviceEnv } from '../../../test/deploy/support/service-env.js';
import { npmStart, startService, type ServiceProcess } from '../../../test/support/service-process.js';
import { GRPC_REQUEST, hostileWorker } from '../../../test/support/hostile-worker.js';
import { rawCall, rawClient, requestWithKeyBytes, type RawClient } from './cache-fixture.js';
import { MAX_CONCURRENT_STREAMS } from '../src/server.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

const MiB = 1024 * 1024;
/** A connection of its own per client, as separate callers have. */
const ownConnection = { 'grpc.use_local_subchannel_pool': 1 };

/**
 * The most expensive requests the cache service accepts or refuses, each sent again and again by
 * one caller (from a worker thread, off the probes' event loop), against the service as its container runs it (a process of its own, default
 * limits): a value of exactly the largest size (1 MiB), a message over it, a key that is not
 * UTF-8, and a connection that keeps every stream it may open busy. Meanwhile another caller's Get
 * keeps its p99 under 100 ms.
 */
describe('the cache service under its worst requests', () => {
  let cache: ServiceProcess;
  let address: string;
  const clients: RawClient[] = [];
  const closers: Array<() => void> = [];

  beforeAll(async () => {
    await buildService('cache');
    cache = await startService({ name: 'cache', ...npmStart('cache'), env: serviceEnv('cache', {}) });
    address = `127.0.0.1:${cache.port!}`;
  }, HANG_GUARD_MS);

  afterAll(async () => {
    for (const client of clients) client.close();
    for (const close of closers) close();
    await cache.stop();
  });

  /** A Set of these request bytes, sent again and again from a worker thread, expecting `code`. */
  const fromWorker = (request: Buffer, code: status): (() => Promise<void>) => {
    const worker = hostileWorker(GRPC_REQUEST, { address, path: cacheServiceDefinition().Set.path, request: request.toString('base64'), code });
    closers.push(() => void worker.close());
    return () => worker.request();
  };

  const client = (): RawClient => {
    const created = rawClient(address, ownConnection);
    clients.push(created);
    return created;
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

  const hostileRequests: Array<[string, () => () => Promise<void>]> = [
    ['a Set of the largest value (1 MiB)', () => fromWorker(requestWithKeyBytes(Buffer.from('largest'), Buffer.alloc(MiB, 7)), status.OK)],
    ['a message over the largest value (refused)', () => fromWorker(requestWithKeyBytes(Buffer.from('oversized'), Buffer.alloc(MiB + 8192, 7)), status.RESOURCE_EXHAUSTED)],
    ['a key that is not UTF-8 (refused)', () => fromWorker(requestWithKeyBytes(Buffer.from([0xff, 0xfe]), Buffer.from('v')), status.INVALID_ARGUMENT)],
    [`a connection holding all ${MAX_CONCURRENT_STREAMS} streams it may open`, () => holdAllStreams],
  ];

  it.each(hostileRequests)(
    "should keep another caller's Get p99 under 100 ms while %s arrives again and again",
    async (_name, hostileRequest) => {
      const probeClient = client();
      await rawCall(probeClient, 'Set', { key: 'probe', value: Buffer.from('small') });
      const result = await latencyUnderLoad({
        probe: async () => {
          expect((await rawCall(probeClient, 'Get', { key: 'probe' })).found).toBe(true);
        },
        hostile: [hostileRequest()],
        samples: 200,
      });
      expect(result.hostileCompleted).toBeGreaterThan(5);
      // Under 100 ms, past what the shared machine shows without any hostile request.
      expect(result.p99Ms).toBeLessThan(100 + result.baselineP99Ms);
    },
    60_000,
  );
});
