import { spawn } from 'node:child_process';
import { once } from 'node:events';

/** A server binary a test runs (Prometheus, the OpenTelemetry Collector), with its output kept for errors. */
export interface ToolProcess {
  /** The last few KiB it wrote to stdout and stderr. */
  output(): string;
  /** Stops it with `signal` and waits for the exit; safe to call twice. */
  stop(signal: NodeJS.Signals): Promise<void>;
  /** Resolves once `url` answers 2xx; fails when the process exits first or after `timeoutMs`. */
  waitForHttp(url: string, timeoutMs?: number): Promise<void>;
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
    output,
    async stop(signal) {
      if (exited()) return;
      const exit = once(child, 'exit');
      child.kill(signal);
      await exit;
    },
    async waitForHttp(url, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (exited()) throw new Error(`${bin} exited (${child.exitCode ?? child.signalCode}):\n${output()}`);
        if (await fetch(url, { signal: AbortSignal.timeout(2000) }).then((response) => response.ok, () => false)) return;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      throw new Error(`${bin} did not answer ${url} within ${timeoutMs} ms:\n${output()}`);
    },
  };
}
