// Summaries of a V8 CPU profile (`node --cpu-prof`): where a process spent its samples, by
// function (self time) and by package, so a benchmark can print the top frames beside its figures.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  /** Microseconds from the previous sample (the first: from the profile's start). */
  timeDeltas: number[];
}

export interface ProfileShare {
  name: string;
  /** Share of the samples taken while the process was not idle, in percent. */
  percent: number;
}

export interface ProfileSummary {
  samples: number;
  /** Functions by their own (self) samples. */
  topFrames: ProfileShare[];
  /** Self samples grouped by where the code lives: a package, node's internals, this project, V8. */
  byOrigin: ProfileShare[];
}

/** node_modules/<package>, node:<module>, the project's own code, or V8's pseudo-frames. */
function originOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const packageMatch = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (packageMatch) return packageMatch[1]!;
  if (url.startsWith('node:')) return url.replace(/^node:internal\//, 'node:').split('/')[0]!;
  const own = /\/(services\/[^/]+|packages\/[^/]+|bench)\//.exec(url);
  return own ? own[1]! : url;
}

const frameName = (node: ProfileNode): string => {
  const { functionName, url, lineNumber } = node.callFrame;
  if (url === '') return functionName || '(anonymous)';
  const file = url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(services|packages|bench)\//, '$1/');
  return `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
};

const top = (counts: Map<string, number>, total: number, n: number): ProfileShare[] =>
  [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, count]) => ({ name, percent: Number(((100 * count) / total).toFixed(1)) }));

/**
 * The top `n` frames and origins of the profile, idle samples and those of the first `skipMs`
 * (the process starting: module loading, which would otherwise crowd the list) left out.
 */
export function summarizeProfile(profile: Profile, n = 20, skipMs = 0): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const frames = new Map<string, number>();
  const origins = new Map<string, number>();
  let total = 0;
  let atMicros = 0;
  for (const [index, id] of profile.samples.entries()) {
    atMicros += profile.timeDeltas[index] ?? 0;
    const node = byId.get(id)!;
    if (atMicros < skipMs * 1000 || node.callFrame.functionName === '(idle)') continue;
    total++;
    const name = frameName(node);
    frames.set(name, (frames.get(name) ?? 0) + 1);
    const origin = originOf(node.callFrame.url, node.callFrame.functionName);
    origins.set(origin, (origins.get(origin) ?? 0) + 1);
  }
  return { samples: total, topFrames: top(frames, total, n), byOrigin: top(origins, total, n) };
}

/** The summary of the one profile `node --cpu-prof --cpu-prof-dir=dir` wrote into `dir`. */
export function summarizeProfileDir(dir: string, n = 20, skipMs = 0): ProfileSummary {
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error(`no .cpuprofile in ${dir}`);
  return summarizeProfile(JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile, n, skipMs);
}
