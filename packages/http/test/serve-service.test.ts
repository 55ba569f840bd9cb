import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { createLogger } from '@sp/observability';
import { createRegistry } from '@sp/observability';
import { serveService, type ServedApi } from '../src/serve-service.js';

const logger = createLogger({ service: 'test', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
const status = (url: string): Promise<number> => fetch(url).then((res) => res.status);
/** No signal handlers in the test process, and an exit that only records its code. */
const inTest = (exits: number[]) => ({ signals: [], exit: (code: number) => void exits.push(code) });

describe('serveService', () => {
  it('should take readiness off, drain the API, close the adapters and stop the management listener, in that order', async () => {
    const steps: string[] = [];
    const exits: number[] = [];
    let management = '';
    const api: ServedApi<undefined> = {
      start: () => Promise.resolve(undefined),
      stopServing: () => void steps.push('stop serving'),
      drain: async (graceMs) => void steps.push(`drain within ${graceMs} ms, /readyz ${await status(`${management}/readyz`)}`),
    };
    const served = await serveService({
      api,
      config: { managementPort: 0, shutdownGraceMs: 3000 },
      registry: createRegistry('test'),
      readiness: [],
      logger,
      closeReserveMs: 1000,
      close: async () => void steps.push(`close adapters, /livez ${await status(`${management}/livez`)}`),
      shutdown: inTest(exits),
    });
    management = `http://127.0.0.1:${served.managementPort}`;
    expect(await status(`${management}/readyz`)).toBe(200);

    await served.shutdown();

    expect(steps).toEqual(['stop serving', 'drain within 2000 ms, /readyz 503', 'close adapters, /livez 200']);
    await expect(fetch(`${management}/livez`)).rejects.toThrow();
    expect(exits).toEqual([0]);
  });

  it('should run the later steps when one fails, and still exit 0 within the grace period', async () => {
    const steps: string[] = [];
    const exits: number[] = [];
    const served = await serveService({
      api: { start: () => Promise.resolve(7777), drain: () => Promise.reject(new Error('stuck connection')) },
      config: { managementPort: 0, shutdownGraceMs: 3000 },
      registry: createRegistry('test'),
      readiness: [],
      logger,
      closeReserveMs: 0,
      close: () => Promise.resolve(void steps.push('close adapters')),
      shutdown: inTest(exits),
    });
    expect(served.port).toBe(7777);
    await served.shutdown();
    expect(steps).toEqual(['close adapters']);
    expect(exits).toEqual([0]);
  });
});
