import { afterAll, beforeAll } from '@jest/globals';
import { createCacheClient, type CacheClient } from '@sp/cache-client';
import { startCacheService, type RunningCacheService } from '../../../../test/support/cache-service.js';

/**
 * The cache service (memory backend, in this process) for the test file that calls this at its
 * top: started before its tests, closed after them. `client` is set once the tests run.
 */
export function inProcessCache(): { client: CacheClient<unknown> } {
  const handle = {} as { client: CacheClient<unknown> };
  let service: RunningCacheService | undefined;
  beforeAll(async () => {
    service = await startCacheService();
    handle.client = createCacheClient<unknown>({ address: service.address });
  });
  afterAll(async () => {
    handle.client.close();
    await service?.close();
  });
  return handle;
}
