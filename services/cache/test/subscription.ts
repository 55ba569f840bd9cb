import { credentials, type ServiceError } from '@grpc/grpc-js';
import { cacheServiceClient, type Invalidation__Output } from '@sp/cache-client';
import { eventually } from '../../../test/support/eventually.js';

/** A Subscribe stream as a test reads it: every message kept, and how the stream ended. */
export interface Subscription {
  readonly messages: Invalidation__Output[];
  /** The changes announced so far (no SUBSCRIBED, no HEARTBEAT), as `KIND key`. */
  changes(): string[];
  /** Until a change matching `kind key` has come. */
  waitFor(change: string, timeoutMs?: number): Promise<void>;
  /** Resolves with the status the stream ended with. */
  readonly ended: Promise<ServiceError>;
  cancel(): void;
}

/** Opens Subscribe on a client of its own and resolves once SUBSCRIBED came (or the stream failed). */
export async function subscribe(address: string, prefixes: string[]): Promise<Subscription> {
  const Client = cacheServiceClient();
  const client = new Client(address, credentials.createInsecure());
  const stream = client.Subscribe({ prefixes });
  const messages: Invalidation__Output[] = [];
  stream.on('data', (message: Invalidation__Output) => messages.push(message));
  const ended = new Promise<ServiceError>((resolve) => {
    stream.on('error', (err: ServiceError) => {
      client.close();
      resolve(err);
    });
  });
  const subscribed = new Promise<void>((resolve) => stream.once('data', () => resolve()));
  await Promise.race([subscribed, ended]);
  const changes = (): string[] => messages.filter((m) => m.kind !== 'SUBSCRIBED' && m.kind !== 'HEARTBEAT').map((m) => `${m.kind} ${m.key}`);
  return {
    messages,
    changes,
    waitFor: async (change, timeoutMs = 5000) => {
      await eventually(() => changes().includes(change), timeoutMs, `announcement "${change}" (got ${changes().join(', ')})`);
    },
    ended,
    cancel() {
      stream.cancel();
      client.close();
    },
  };
}
