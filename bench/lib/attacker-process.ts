// One attack of bench/lib/attacks.ts in a process of its own, started by attackIn: the attacker's
// CPU then competes with the server and the well-behaved client as another program's would,
// instead of beside the well-behaved client inside the benchmark's process. Not at a lower
// priority: an attacker at nice 19 got the CPU only when the server was idle, so it could not pile
// up writes while the server worked, and the reset storm then met the target without the
// per-read limit (p99 11.8 -> 29.8 ms, load 9.4), which a remote attacker, sending at the
// network's pace, does not allow. Arguments: the attack's name and the cache's port; the
// attack's report goes back as the one IPC message.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { AttackReport } from '../../test/support/grpc-attacks.ts';
import { ATTACKS } from './attacks.ts';

/** Runs the attack `name` against `port` in a child process; its report. */
export function attackIn(name: string, port: number): Promise<AttackReport> {
  const child = fork(fileURLToPath(import.meta.url), [name, String(port)], { execArgv: ['--import', 'tsx'] });
  return new Promise((resolve, reject) => {
    child.once('message', (report) => resolve(report as AttackReport));
    child.once('exit', (code) => reject(new Error(`the attacker ${name} exited with ${String(code)} before it reported`)));
  });
}

if (process.send !== undefined && process.argv[1] === fileURLToPath(import.meta.url)) {
  const [name = '', port = ''] = process.argv.slice(2);
  const attack = ATTACKS[name];
  if (attack === undefined) throw new Error(`unknown attack ${name}`);
  process.send(await attack(Number(port)), () => process.disconnect());
}
