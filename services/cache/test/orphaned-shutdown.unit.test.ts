import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import { sourcesStart } from '../../../test/support/service-process.js';

// The cache service as the cache benchmark starts its peers (bench/lib/stats.ts startChild: stdout
// piped to the parent, read until the start line), then its parent gone: the benchmark crashed and
// the service was left with a standard output nobody reads (EPIPE). It must still exit on SIGTERM
// within its grace period; pino's synchronous flush at exit used to retry the write every 100 ms
// for ever, and the process ignored SIGTERM until it was killed.

const GRACE_MS = 3000;

describe('cache service: SIGTERM after its parent went away', () => {
  it('should exit 0 within the grace period when nothing reads its standard output any more', async () => {
    const { cwd, args, env } = sourcesStart('cache');
    const child = spawn(process.execPath, ['--max-old-space-size=320', '--max-semi-space-size=8', ...args], {
      cwd,
      env: { ...process.env, ...env, Cache__Backend: 'memory', Cache__Host: '127.0.0.1', Cache__Port: '0', Management__Port: '0', Shutdown__GracePeriodMs: String(GRACE_MS) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
      let seen = '';
      let early: ((code: number | null) => void) | undefined;
      await new Promise<void>((resolve, reject) => {
        early = (code) => reject(new Error(`exited with ${code} before it listened: ${seen.slice(-2000)}`));
        child.once('exit', early);
        child.stdout.on('data', (chunk: Buffer) => {
          seen += chunk.toString();
          if (seen.includes('cache service listening')) resolve();
        });
      });
      child.removeListener('exit', early!);
      // The parent's end of the pipe closed, as when the parent dies.
      child.stdout.destroy();
      const sent = performance.now();
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), GRACE_MS + 3000)));
      const outcome = await Promise.race([exited.then(([code, signal]) => ({ code, signal, withinGrace: performance.now() - sent < GRACE_MS })), late]);
      clearTimeout(timer);
      expect(outcome).toEqual({ code: 0, signal: null, withinGrace: true });
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, 60_000);
});
