import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { eventually } from './eventually.js';
import { exitOf, processProgress } from './progress.js';

/** A server binary a test runs (Prometheus, the OpenTelemetry Collector), with its output kept for errors. */
export interface ToolProcess {
  /** Its process id (for CPU figures), undefined when it could not be spawned. */
  pid: number | undefined;
  /** The last few KiB it wrote to stdout and stderr. */
  output(): string;
  /** Stops it with `signal` and waits for the exit; safe to call twice. */
  stop(signal: NodeJS.Signals): Promise<void>;
  /** Resolves once `url` answers 2xx; fails when the process exits first or stops making progress (progress.ts). */
  waitForHttp(url: string): Promise<void>;
}

export function startTool(bin: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): ToolProcess {
  const chunks: string[] = [];
  const child = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (chunk: Buffer): void => void chunks.push(chunk.toString('utf8'));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = (): boolean => child.exitCode !== null || child.signalCode !== null;
  const output = (): string => chunks.join('').slice(-4000);
  return {
    pid: child.pid,
    output,
    async stop(signal) {
      if (exited()) return;
      const exit = once(child, 'exit');
      child.kill(signal);
      await exit;
    },
    async waitForHttp(url) {
      const answers = (): Promise<boolean> => fetch(url, { signal: AbortSignal.timeout(2000) }).then((response) => response.ok, () => false);
      try {
        await eventually(answers, { progress: processProgress(child.pid, () => chunks.length), gone: () => exitOf(child) }, `${bin} answering ${url}`);
      } catch (err) {
        throw new Error(`${(err as Error).message}:\n${output()}`);
      }
    },
  };
}
