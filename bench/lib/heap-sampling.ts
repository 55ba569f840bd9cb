// Heap allocation per call of a server process, independent of the machine's load: V8's sampling
// heap profiler through the inspector (`--inspect` on a port of the child's), and the child's own
// `--trace-gc-nvp` lines (what each scavenge found and promoted), over a fixed number of calls.

/** One node of V8's sampling heap profile (Chrome DevTools protocol, HeapProfiler.SamplingHeapProfileNode). */
interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** A sampling heap profile: what `HeapProfiler.stopSampling` answers. */
export interface SamplingHeapProfile {
  head: ProfileNode;
}

/** Bytes by name (a function, a call path, an origin), largest first. */
export type ByteShares = Array<{ name: string; bytes: number }>;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

/** A Chrome DevTools protocol session with a Node process started with `--inspect=host:port`. */
export class InspectorSession {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
      const waiting = message.id === undefined ? undefined : this.pending.get(message.id);
      if (waiting === undefined) return;
      this.pending.delete(message.id!);
      if (message.error !== undefined) waiting.reject(new Error(message.error.message));
      else waiting.resolve(message.result);
    });
  }

  /** Connects to the first target the inspector on `port` lists. */
  static async connect(port: number): Promise<InspectorSession> {
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
    const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      socket.addEventListener('open', resolve, { once: true });
      socket.addEventListener('error', reject, { once: true });
    });
    return new InspectorSession(socket);
  }

  send<T = unknown>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    this.socket.send(JSON.stringify({ id, method, params }));
    return new Promise<T>((resolve, reject) => this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject }));
  }

  close(): void {
    this.socket.close();
  }
}

/** Calls `call` exactly `count` times, `concurrency` at a time (the last ones finish before it resolves). */
export async function callTimes(call: (i: number) => Promise<unknown>, concurrency: number, count: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await call(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
}

/** Where a frame's code comes from: Node itself, a dependency (by package), or the platform's (by package or service). */
export function originOf(url: string): string {
  if (url === '') return '(V8 / native)';
  if (url.startsWith('node:')) return `node: ${url.slice(5).split('/')[1] ?? url.slice(5)}`;
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency !== null) return dependency[1]!;
  const own = /\/(packages|services)\/([^/]+)\//.exec(url);
  return own === null ? url : `${own[1]}/${own[2]}`;
}

const frameName = (node: ProfileNode): string => {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.replace(/^.*\/(packages|services|node_modules)\//, '$1/').replace(/^file:\/\//, '');
  return `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
};

function sorted(totals: Map<string, number>): ByteShares {
  return [...totals].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
}

/**
 * The profile's bytes by allocating function (its own frame), by origin of the allocating frame,
 * and by the nearest frame of the platform's own code (or a dependency's) on the allocation's
 * stack: who caused Node's allocations.
 */
export function summarizeHeapProfile(profile: SamplingHeapProfile): { total: number; byFunction: ByteShares; byOrigin: ByteShares; byStack: ByteShares } {
  const byFunction = new Map<string, number>();
  const byOrigin = new Map<string, number>();
  const byStack = new Map<string, number>();
  let total = 0;
  const add = (map: Map<string, number>, name: string, bytes: number): void => void map.set(name, (map.get(name) ?? 0) + bytes);
  const walk = (node: ProfileNode, path: ProfileNode[]): void => {
    const stack = [...path, node];
    if (node.selfSize > 0) {
      total += node.selfSize;
      add(byFunction, frameName(node), node.selfSize);
      add(byOrigin, originOf(node.callFrame.url), node.selfSize);
      // The last three frames: enough to tell one allocation site of Node's from another.
      add(byStack, stack.slice(-4).map(frameName).join(' < ').replace(/\s+/g, ' '), node.selfSize);
    }
    for (const child of node.children) walk(child, stack);
  };
  walk(profile.head, []);
  return { total, byFunction: sorted(byFunction), byOrigin: sorted(byOrigin), byStack: sorted(byStack) };
}

/** One garbage collection as `--trace-gc-nvp` prints it (the fields this file uses). */
export interface GcLine {
  kind: string;
  pauseMs: number;
  allocatedBytes: number;
  promotedBytes: number;
  /** new_space_survived: copied within the young generation. */
  survivedBytes: number;
}

/** The `--trace-gc-nvp` lines in `text` (other output is passed over). */
export function parseGcLines(text: string): GcLine[] {
  const lines: GcLine[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes('gc=')) continue;
    const field = (name: string): string | undefined => new RegExp(`(?:^|\\s)${name}=(\\S+)`).exec(line)?.[1];
    lines.push({
      kind: field('gc') ?? '?',
      pauseMs: Number(field('pause') ?? 0),
      allocatedBytes: Number(field('allocated') ?? 0),
      promotedBytes: Number(field('promoted') ?? 0),
      survivedBytes: Number(field('new_space_survived') ?? 0),
    });
  }
  return lines;
}

/** Totals of `--trace-gc-nvp` lines over some calls, per call (bytes) and per 10,000 calls (collections). */
export interface GcFigures {
  allocatedBytesPerCall: number;
  /** Moved from the young generation to the old one by scavenges. */
  promotedBytesPerCall: number;
  /** Copied within the young generation by scavenges (survived one). */
  survivedBytesPerCall: number;
  scavengesPer10k: number;
  markCompactsPer10k: number;
  pauseMsPer10k: number;
}

export function gcFigures(lines: GcLine[], calls: number): GcFigures {
  const sum = (of: (line: GcLine) => number, which: GcLine[] = lines): number => which.reduce((total, line) => total + of(line), 0);
  const scavenges = lines.filter((line) => line.kind === 's');
  const perCall = (bytes: number): number => Math.round(bytes / calls);
  const per10k = (count: number): number => Number(((count * 10_000) / calls).toFixed(1));
  return {
    allocatedBytesPerCall: perCall(sum((line) => line.allocatedBytes)),
    promotedBytesPerCall: perCall(sum((line) => line.promotedBytes, scavenges)),
    survivedBytesPerCall: perCall(sum((line) => line.survivedBytes, scavenges)),
    scavengesPer10k: per10k(scavenges.length),
    markCompactsPer10k: per10k(lines.filter((line) => line.kind === 'mc').length),
    pauseMsPer10k: per10k(sum((line) => line.pauseMs)),
  };
}

/** What a server allocates per call, and what of it a mark-compact frees (it survived the scavenges), by allocation site. */
export interface AllocationFigures {
  /** Calls of each sampling profile. */
  calls: number;
  /** Calls the garbage collector's totals were taken over (mark-compacts are few: more calls than a profile's). */
  gcCalls: number;
  gc: GcFigures;
  sampledBytesPerCall: number;
  /** Sampled bytes per call of objects that died in a mark-compact (plus the few still alive at the end). */
  oldGarbageBytesPerCall: number;
  byOrigin: ByteShares;
  topSites: ByteShares;
  oldGarbageByOrigin: ByteShares;
  oldGarbageTopSites: ByteShares;
}

const SAMPLING_INTERVAL_BYTES = 256;
const perCallShares = (shares: ByteShares, calls: number, count: number): ByteShares =>
  shares.slice(0, count).map(({ name, bytes }) => ({ name, bytes: Math.round(bytes / calls) }));

/**
 * A server started with `--inspect` on `inspectPort` and `--trace-gc-nvp` (its output kept), after
 * a warm-up of `calls` calls: the garbage collector's totals over `gcCalls` more, then V8's sampling
 * heap profile over `calls` each with every object sampled and with only those a mark-compact
 * collected. Counted per call, the figures do not depend on how loaded the machine is.
 */
export async function allocationPerCall(inspectPort: number, output: () => string, call: (i: number) => Promise<unknown>, concurrency: number, calls: number, gcCalls: number): Promise<AllocationFigures> {
  const session = await InspectorSession.connect(inspectPort);
  try {
    await callTimes(call, concurrency, calls);
    const from = output().length;
    await callTimes(call, concurrency, gcCalls);
    const gc = gcFigures(parseGcLines(output().slice(from)), gcCalls);
    await session.send('HeapProfiler.enable');
    const sampled = async (includeObjectsCollectedByMinorGC: boolean): Promise<ReturnType<typeof summarizeHeapProfile>> => {
      await session.send('HeapProfiler.startSampling', { samplingInterval: SAMPLING_INTERVAL_BYTES, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC });
      await callTimes(call, concurrency, calls);
      return summarizeHeapProfile((await session.send<{ profile: SamplingHeapProfile }>('HeapProfiler.stopSampling')).profile);
    };
    const all = await sampled(true);
    const oldGarbage = await sampled(false);
    return {
      calls,
      gcCalls,
      gc,
      sampledBytesPerCall: Math.round(all.total / calls),
      oldGarbageBytesPerCall: Math.round(oldGarbage.total / calls),
      byOrigin: perCallShares(all.byOrigin, calls, 12),
      topSites: perCallShares(all.byFunction, calls, 20),
      oldGarbageByOrigin: perCallShares(oldGarbage.byOrigin, calls, 12),
      oldGarbageTopSites: perCallShares(oldGarbage.byFunction, calls, 20),
    };
  } finally {
    session.close();
  }
}
