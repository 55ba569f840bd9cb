import { setTimeout as sleep } from 'node:timers/promises';
import { cpuTimeMs, STALL_MS } from './progress.js';

export interface LoadOptions {
  /** One request of another caller, timed: it must succeed (it throws otherwise). */
  probe: () => Promise<void>;
  /** Hostile requests, each run in a loop of its own for the whole measurement. */
  hostile: ReadonlyArray<() => Promise<void>>;
  /** Probes timed, one after the other. Default 300. */
  samples?: number;
  /** Pause between two probes, so they sample latency over the load rather than add to it. Default 5 ms. */
  pauseMs?: number;
  /** The service's process, whose CPU time per hostile request is then measured (serviceCpuMsPerHostile). */
  servicePid?: number;
  /**
   * Hostile requests that must complete while the probes run, default 6: the probes go on past
   * `samples` until they have, for at most STALL_MS more. A slow hostile request (one that holds a
   * connection's streams until they are refused) completes fewer times within `samples` probes on
   * a busy machine; the count that shows the load was there must not depend on its speed (issue 40).
   */
  minHostile?: number;
}

export interface LoadResult {
  /** 99th percentile of the probes' latency, in ms. */
  p99Ms: number;
  /** The same without the hostile requests, measured just before: what the machine itself adds. */
  baselineP99Ms: number;
  /** Slowest probe, in ms. */
  maxMs: number;
  probes: number;
  /** Hostile requests completed while the probes ran (a test checks the load was really there). */
  hostileCompleted: number;
  /**
   * With `servicePid`: the service's CPU time (user + system, ms) per hostile request completed
   * while the probes ran, less what the probes themselves cost it (measured in the baseline). The
   * longest a request can hold the service's event loop, and unlike a latency it does not grow
   * with the machine's load: the figure a test can hold to a fixed bound (issue 40).
   */
  serviceCpuMsPerHostile?: number;
}

/** The CPU time (ms) `pid` has used so far; 0 without a pid. */
function cpuOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const used = cpuTimeMs(pid);
  if (used === undefined) throw new Error(`process ${pid} is gone`);
  return used;
}

/** `samples` probes, and more while `more()` says so; none once `failed()`. */
async function timeProbes(options: LoadOptions, failed: () => boolean, more: () => boolean = () => false): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; (i < (options.samples ?? 300) || more()) && !failed(); i++) {
    const begin = performance.now();
    await options.probe();
    latencies.push(performance.now() - begin);
    await sleep(options.pauseMs ?? 5);
  }
  return latencies.sort((a, b) => a - b);
}

const p99 = (sorted: readonly number[]): number => sorted[Math.ceil(sorted.length * 0.99) - 1]!;

/**
 * "The worst request keeps others answered": times `samples` probes alone (the baseline: on a
 * shared, loaded machine its p99 alone can be tens of ms), then runs every hostile request in its
 * own loop, waits until each has completed once (so the load is established), times `samples`
 * probes again (more until `minHostile` hostile requests completed meanwhile) and stops the loops. A failing probe or hostile request fails the measurement: each
 * must answer as expected every time. The latencies are make bench's to hold to a target
 * (bench/worst-request.bench.ts); a test holds the service's CPU per hostile request, which a busy
 * machine does not change (issue 40).
 */
export async function latencyUnderLoad(options: LoadOptions): Promise<LoadResult> {
  const baselineCpu = cpuOf(options.servicePid);
  const baseline = await timeProbes(options, () => false);
  const probeCpuMs = (cpuOf(options.servicePid) - baselineCpu) / baseline.length;
  let stopped = false;
  let completed = 0;
  let failure: Error | undefined;
  const started = new Set<number>();
  const loops = options.hostile.map(async (request, index) => {
    try {
      while (!stopped && failure === undefined) {
        await request();
        started.add(index);
        completed++;
      }
    } catch (err) {
      failure ??= err instanceof Error ? err : new Error('a hostile request failed', { cause: err });
    }
  });
  try {
    while (started.size < options.hostile.length && failure === undefined) await sleep(10);
    const atStart = completed;
    const loadedCpu = cpuOf(options.servicePid);
    const probingEnds = performance.now() + STALL_MS;
    const fewHostile = (): boolean => completed - atStart < (options.minHostile ?? 6) && performance.now() < probingEnds;
    const latencies = await timeProbes(options, () => failure !== undefined, fewHostile);
    const hostileCompleted = completed - atStart;
    const hostileCpuMs = cpuOf(options.servicePid) - loadedCpu - latencies.length * probeCpuMs;
    stopped = true;
    await Promise.all(loops);
    if (failure !== undefined) throw failure;
    const result: LoadResult = { p99Ms: p99(latencies), baselineP99Ms: p99(baseline), maxMs: latencies[latencies.length - 1]!, probes: latencies.length, hostileCompleted };
    if (options.servicePid !== undefined) result.serviceCpuMsPerHostile = Number((Math.max(0, hostileCpuMs) / Math.max(1, hostileCompleted)).toFixed(2));
    return result;
  } finally {
    stopped = true;
    await Promise.all(loops);
  }
}
