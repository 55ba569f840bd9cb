import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { endableLogDestination, endLogs } from '../src/log-exit.js';

// pino's asynchronous destination (sonic-boom) throws on a write once it is closed. Deterministic
// beside the shutdown test's fixture, which logs every millisecond and meets the closed stream
// only when a line lands between its close and the exit.
describe('endableLogDestination', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** pino's asynchronous destination on a file of its own, once open. */
  async function fileDestination(): Promise<{ file: string; stream: ReturnType<typeof pino.destination> }> {
    const dir = mkdtempSync(join(tmpdir(), 'sp-log-exit-'));
    dirs.push(dir);
    const file = join(dir, 'out.log');
    const stream = pino.destination({ dest: file, sync: false });
    await once(stream, 'ready');
    return { file, stream };
  }

  it('should write every line before endLogs, and drop, not throw, a line logged after it closed the stream', async () => {
    const { file, stream } = await fileDestination();
    const destination = endableLogDestination(stream);
    destination.write('before\n');
    await endLogs(1000);
    expect(() => destination.write('after\n')).not.toThrow();
    expect(readFileSync(file, 'utf8')).toBe('before\n');
  });

  it('should still throw a closed stream\'s error when no exit is under way', async () => {
    const { stream } = await fileDestination();
    const destination = endableLogDestination(stream);
    stream.destroy();
    expect(() => destination.write('line\n')).toThrow('SonicBoom destroyed');
  });
});
