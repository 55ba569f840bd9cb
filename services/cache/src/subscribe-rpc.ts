import { badRequest, toGrpcStatus } from '@sp/core';
import type { GrpcStreamCall } from '@sp/grpc-server';
import type { Invalidation, SubscribeRequest__Output } from '@sp/cache-client';
import type { ChangeKind, InvalidationHub } from './invalidation-hub.js';
import { keysAreUtf8 } from './utf8-keys.js';

export const MAX_PREFIXES = 64;
export const MAX_PREFIX_BYTES = 1024;
/** An Invalidation's bytes besides its key (UTF-16 units, at most 3 bytes each in UTF-8): sequence, kind, tags, framing. */
const MESSAGE_OVERHEAD_BYTES = 32;

export interface SubscribeOptions {
  /** Interval of HEARTBEAT messages. Default 1000 ms (the proto says so). */
  heartbeatMs?: number;
  /**
   * Messages a stream may hold unsent (its client reads too slowly) before the service drops
   * further ones, leaving a gap in the sequence, instead of buffering without bound. Default 10,000.
   * Messages are also dropped while the transport's budget of unsent answers is spent (its
   * connection's or the process'), so many unread streams cannot add up either.
   */
  maxBuffered?: number;
}

export function validatePrefixes(request: SubscribeRequest__Output): string[] {
  const { prefixes } = request;
  if (prefixes.length === 0) throw badRequest('prefixes: at least one is required ("" watches every key)');
  if (prefixes.length > MAX_PREFIXES) throw badRequest(`prefixes: at most ${MAX_PREFIXES}`);
  if (prefixes.some((prefix) => Buffer.byteLength(prefix, 'utf8') > MAX_PREFIX_BYTES)) throw badRequest(`prefixes: each at most ${MAX_PREFIX_BYTES} bytes`);
  // As keys: bytes that are not UTF-8 would decode to U+FFFD and watch the keys that hold one.
  if (!keysAreUtf8(request)) throw badRequest('prefixes must be valid UTF-8');
  return prefixes;
}

type MessageKind = ChangeKind | 'SUBSCRIBED' | 'HEARTBEAT';

/** The Subscribe RPC: one hub listener per stream, numbered messages, heartbeats. */
export function createSubscribeHandler(hub: InvalidationHub, options: SubscribeOptions = {}) {
  const heartbeatMs = options.heartbeatMs ?? 1000;
  const maxBuffered = options.maxBuffered ?? 10_000;

  return (call: GrpcStreamCall<SubscribeRequest__Output, Invalidation>): void => {
    let prefixes: string[];
    try {
      prefixes = validatePrefixes(call.request);
      const problem = hub.unavailable();
      if (problem !== undefined) throw problem;
    } catch (err) {
      call.emit('error', toGrpcStatus(err));
      return;
    }

    let sequence = 0;
    const send = (kind: MessageKind, key = ''): void => {
      sequence++;
      // Dropped, not queued: the client sees the jump in `sequence` and flushes.
      if (call.writableLength >= maxBuffered || !call.hasRoom(MESSAGE_OVERHEAD_BYTES + key.length * 3)) return;
      call.write({ sequence, key, kind });
    };
    const heartbeat = setInterval(() => send('HEARTBEAT'), heartbeatMs);
    const unsubscribe = hub.subscribe(prefixes, {
      changed: (key, kind) => send(kind, key),
      lost: (reason) => {
        stop();
        call.emit('error', toGrpcStatus(reason));
      },
    });
    function stop(): void {
      clearInterval(heartbeat);
      unsubscribe();
    }
    call.on('cancelled', stop);
    call.on('close', stop);
    send('SUBSCRIBED');
  };
}
