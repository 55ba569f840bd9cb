import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import { eventually } from './eventually.js';
import { cpuTimeMs, exitOf, processProgress } from './progress.js';

describe('eventually bounded by progress', () => {
  it('should wait past any fixed guess while progress goes on, and resolve once the check holds', async () => {
    let done = 0;
    const timer = setInterval(() => (done += 1), 50);
    try {
      // 40 steps of 50 ms take 2 s: ten times the stall bound, which never passes without progress.
      await expect(eventually(() => done >= 40 && done, { progress: () => done, stallMs: 200 }, '40 steps')).resolves.toBeGreaterThanOrEqual(40);
    } finally {
      clearInterval(timer);
    }
  });

  it('should fail once progress has stopped for stallMs, naming the last progress', async () => {
    const started = Date.now();
    await expect(eventually(() => false, { progress: () => 7, stallMs: 300 }, 'a count of 8')).rejects.toThrow(/^a count of 8 not met: no progress for 300 ms \(progress: 7\) \(last: false\)$/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('should fail at once when the work is gone (its process exited)', async () => {
    const child = spawn(process.execPath, ['-e', 'process.exit(3)'], { stdio: 'ignore' });
    await once(child, 'exit');
    await expect(eventually(() => false, { progress: processProgress(child.pid), gone: () => exitOf(child) }, 'a ready process')).rejects.toThrow('a ready process not met: exited (3)');
  });

  it('should count the CPU time a busy process uses as progress', async () => {
    const child = spawn(process.execPath, ['-e', 'const end = Date.now() + 400; while (Date.now() < end);'], { stdio: 'ignore' });
    try {
      const first = await eventually(() => cpuTimeMs(child.pid!), 5000, 'a first reading');
      await eventually(() => (cpuTimeMs(child.pid!) ?? first) > first, 5000, 'more CPU time');
    } finally {
      child.kill();
    }
  });
});
