import { Worker } from 'node:worker_threads';
import { AppError } from '@sp/core';
import type { SchemaChangeReport } from '@sp/graphs';
import type { ComposedArtifacts, CompositionError, SchemaJob, SchemaJobResult, SubgraphInput } from './schema-job.js';
import { emptyReport } from './schema-changes.js';
import type { SdlProblem } from './schema-sdl.js';

export interface SchemaCheckerOptions {
  /** Worker threads checking schemas side by side. */
  workers: number;
  /** Longest a worker may spend on one schema; past it the worker is stopped and the request answered 422. */
  timeBudgetMs: number;
  /** Longest a worker may spend on one composition (O(total SDL of every subgraph)); past it, 422 as well. */
  compositionBudgetMs: number;
  /** Schemas waiting for a worker; past it a request is answered 503 with Retry-After. */
  maxQueued: number;
  /** Heap of one worker; a schema needing more is answered 422. */
  maxMemoryMb: number;
}

export const DEFAULT_SCHEMA_CHECKER: SchemaCheckerOptions = { workers: 1, timeBudgetMs: 1000, compositionBudgetMs: 10_000, maxQueued: 8, maxMemoryMb: 512 };

/** What a composition led to (federation/composition.ts, in the worker). */
export type CompositionOutcome =
  | { kind: 'invalid'; problems: SdlProblem[] }
  | { kind: 'not-composable'; errors: CompositionError[] }
  | { kind: 'composed'; artifacts: ComposedArtifacts; report: SchemaChangeReport };

/** Checks schemas off the event loop. */
export interface SchemaChecker {
  /** The schema's problems (empty when valid); rejects with a 422 or 503 AppError past a limit. */
  check(sdl: string): Promise<SdlProblem[]>;
  /** The problems of `sdl` and, when there are none, its changes since `previous` (an empty report without one). */
  compare(sdl: string, previous: string | undefined): Promise<{ problems: SdlProblem[]; report: SchemaChangeReport }>;
  /**
   * Composes the subgraphs (`checked` names the one being published, whose syntax errors are its
   * own problems) and compares the public API with `previousApi`; under the composition budget.
   */
  compose(subgraphs: SubgraphInput[], previousApi: string | undefined, checked: string): Promise<CompositionOutcome>;
  /** The changes between two SDLs of one subgraph (each composed alone). */
  subgraphDiff(name: string, before: string, after: string): Promise<SchemaChangeReport>;
  close(): Promise<void>;
}

/** A schema past the registry's limits: it may be valid, but checking it costs too much. */
export const schemaTooComplex = (message: string): AppError => new AppError(422, 'schema_too_complex', `schema too complex: ${message}`);

/** Too many schemas wait to be checked or published: 503 with Retry-After. */
export const schemaChecksBusy = (): AppError => new AppError(503, 'busy', 'schema checks are busy; retry later', { headers: { 'Retry-After': '1' } });

interface Pending {
  job: SchemaJob;
  resolve(result: SchemaJobResult): void;
  reject(err: unknown): void;
}

/** In tests the sources run as they are (Node strips their types); in production, the built file beside this one. */
const workerFile = new URL(import.meta.url.endsWith('.ts') ? './schema-worker.ts' : './schema-worker.js', import.meta.url);

/**
 * One worker thread, started with the checker (and again after it was stopped), and the job it
 * runs. The job's timer starts when the worker has it, so a starting worker (loading graphql-js)
 * does not eat a schema's budget.
 */
class Lane {
  private worker: Worker | undefined;
  private ready = false;
  private running: { pending: Pending; timer: NodeJS.Timeout } | undefined;

  constructor(
    private readonly options: SchemaCheckerOptions,
    private readonly next: () => Pending | undefined,
  ) {
    this.worker = this.spawn();
  }

  private spawn(): Worker {
    this.ready = false;
    const worker = new Worker(workerFile, { resourceLimits: { maxOldGenerationSizeMb: this.options.maxMemoryMb } });
    worker.unref();
    worker.on('message', (result: SchemaJobResult) => this.answered(result));
    worker.on('error', (err: Error & { code?: string }) => {
      const tooBig = err.code === 'ERR_WORKER_OUT_OF_MEMORY';
      this.replace(tooBig ? schemaTooComplex(`checking it needs more than ${this.options.maxMemoryMb} MB`) : err);
    });
    return worker;
  }

  private answered(result: SchemaJobResult): void {
    if (result.kind === 'ready') this.ready = true;
    const running = this.running;
    this.running = undefined;
    if (running !== undefined) {
      clearTimeout(running.timer);
      running.pending.resolve(result);
    }
    this.pump();
  }

  /** Stops the worker (it may be stuck in a check) and fails its job; a fresh worker takes over. */
  private replace(reason: unknown): void {
    const running = this.running;
    this.running = undefined;
    if (running !== undefined) {
      clearTimeout(running.timer);
      running.pending.reject(reason);
    }
    void this.worker?.terminate();
    this.worker = this.spawn();
  }

  pump(): void {
    this.worker ??= this.spawn();
    if (!this.ready || this.running !== undefined) return;
    const pending = this.next();
    if (pending === undefined) return;
    const composing = pending.job.kind !== 'check';
    const budget = composing ? this.options.compositionBudgetMs : this.options.timeBudgetMs;
    const what = composing ? 'composing it' : 'checking it';
    const timer = setTimeout(() => this.replace(schemaTooComplex(`${what} takes longer than ${budget} ms`)), budget);
    this.running = { pending, timer };
    this.worker.postMessage(pending.job);
  }

  async close(): Promise<void> {
    this.running?.pending.reject(new AppError(503, 'unavailable', 'shutting down'));
    if (this.running !== undefined) clearTimeout(this.running.timer);
    this.running = undefined;
    await this.worker?.terminate();
    this.worker = undefined;
  }
}

/**
 * A checker whose workers start with the first schema: for an app given none (tools, tests of
 * other services), which may never see one.
 */
export function createLazySchemaChecker(options: SchemaCheckerOptions = DEFAULT_SCHEMA_CHECKER): SchemaChecker {
  let checker: SchemaChecker | undefined;
  return {
    check: (sdl) => (checker ??= createSchemaChecker(options)).check(sdl),
    compare: (sdl, previous) => (checker ??= createSchemaChecker(options)).compare(sdl, previous),
    compose: (subgraphs, previousApi, checked) => (checker ??= createSchemaChecker(options)).compose(subgraphs, previousApi, checked),
    subgraphDiff: (name, before, after) => (checker ??= createSchemaChecker(options)).subgraphDiff(name, before, after),
    close: () => checker?.close() ?? Promise.resolve(),
  };
}

/**
 * A pool of worker threads checking schemas with a time and memory budget each, so that no
 * schema, however hostile, blocks the registry's lookups: graphql-js' checks run synchronously
 * and some of their costs grow faster than the text.
 */
export function createSchemaChecker(options: SchemaCheckerOptions = DEFAULT_SCHEMA_CHECKER): SchemaChecker {
  const queue: Pending[] = [];
  const lanes: Lane[] = [];
  for (let i = 0; i < options.workers; i += 1) lanes.push(new Lane(options, () => queue.shift()));
  const run = (job: SchemaJob): Promise<SchemaJobResult> => {
    if (queue.length >= options.maxQueued) return Promise.reject(schemaChecksBusy());
    return new Promise((resolve, reject) => {
      queue.push({ job, resolve, reject });
      for (const lane of lanes) lane.pump();
    });
  };
  const answered = async (job: SchemaJob): Promise<Exclude<SchemaJobResult, { kind: 'ready' | 'too-complex' }>> => {
    const result = await run(job);
    if (result.kind === 'too-complex') throw schemaTooComplex(result.message);
    if (result.kind === 'ready') throw new Error('schema worker answered ready to a job');
    return result;
  };
  const checked = async (job: SchemaJob): Promise<{ problems: SdlProblem[]; report?: SchemaChangeReport }> => {
    const result = await answered(job);
    return result.kind === 'checked' ? result : { problems: [] };
  };
  return {
    check: async (sdl) => (await checked({ kind: 'check', sdl })).problems,
    async compare(sdl, previous) {
      const { problems, report } = await checked(previous === undefined ? { kind: 'check', sdl } : { kind: 'check', sdl, previous });
      return { problems, report: report ?? emptyReport() };
    },
    async compose(subgraphs, previousApi, checkedName) {
      const result = await answered({ kind: 'compose', subgraphs, checked: checkedName, ...(previousApi === undefined ? {} : { previousApi }) });
      return result.kind === 'checked' ? { kind: 'invalid', problems: result.problems } : result;
    },
    async subgraphDiff(name, before, after) {
      return (await checked({ kind: 'subgraph-diff', name, before, after })).report ?? emptyReport();
    },
    async close() {
      for (const pending of queue.splice(0)) pending.reject(new AppError(503, 'unavailable', 'shutting down'));
      await Promise.all(lanes.map((lane) => lane.close()));
    },
  };
}
