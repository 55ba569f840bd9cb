import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const fixture = fileURLToPath(new URL('./fixtures/drain-server.ts', import.meta.url));

describe('graceful shutdown', () => {
  it('should finish an in-flight request after SIGTERM, refuse new ones while /readyz answers 503, and exit 0', async () => {
    const child = spawn(process.execPath, [fixture], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines: Array<Record<string, unknown>> = [];
    const listening = new Promise<{ port: number; managementPort: number }>((resolve) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        const entry = JSON.parse(line) as Record<string, unknown>;
        lines.push(entry);
        if (entry.msg === 'listening') resolve(entry as { port: number; managementPort: number });
      });
    });
    const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
    const { port, managementPort } = await listening;
    const base = `http://127.0.0.1:${port}`;

    const inFlight = fetch(`${base}/slow`).then(async (res) => ({ status: res.status, body: await res.text() }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 200));

    await expect(fetch(`${base}/fast`)).rejects.toThrow();
    expect((await fetch(`http://127.0.0.1:${managementPort}/readyz`)).status).toBe(503);
    await expect(inFlight).resolves.toEqual({ status: 200, body: 'slow done' });
    const [code] = await exited;
    expect(code).toBe(0);
    expect(lines.map((line) => line.msg)).toEqual(['listening', 'shutting down', 'shutdown complete']);
  });
});
