import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { testEnvironment, type Dependencies } from './webhooks-env.js';

/** The service built by `tsc --build`, started as its container starts it. */
const mainPath = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

export interface WebhooksProcess {
  baseUrl: string;
  pid: number;
  close(): Promise<void>;
}

/**
 * The webhooks service as a process of its own (from its build), on the test environment's
 * dependencies: for checks whose figures must not include the test's own work, such as latency
 * under load (the test's clients and fixtures then run on another event loop).
 */
export async function startWebhooksProcess(deps: Dependencies): Promise<WebhooksProcess> {
  const env = { ...testEnvironment(deps), PATH: process.env.PATH ?? '', Webhooks__Port: '0', Webhooks__Host: '127.0.0.1', Management__Port: '0', Log__Level: 'info' };
  const child: ChildProcess = spawn(process.execPath, [mainPath], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the webhooks process did not start:\n${output.join('')}`)), 30_000);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      output.push(chunk);
      const line = output.join('').split('\n').find((candidate) => candidate.includes('webhooks service listening'));
      if (line === undefined) return;
      clearTimeout(timer);
      resolve((JSON.parse(line) as { port: number }).port);
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the webhooks process exited with ${String(code)}:\n${output.join('')}`));
    });
  });
  child.stdout!.resume();
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    async close() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
