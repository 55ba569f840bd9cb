// make bench: where the graph registry's composition time goes (issue 44). In this process, no
// server and no store: for each size, the same subgraph SDLs composed by
//  - the library alone (@theguild/federation-composition's composeServices on parsed SDLs), and
//  - the registry's composition job (composeSubgraphs: the same call, plus the registry's parse
//    limits, the artifacts and their hashes, and the public schema's change report against the
//    previous one), which is what a publish runs in the schema worker;
// in two shapes: `shared` (every subgraph adds a field to one entity all of them share, as
// federation.bench.ts publishes) and `own` (each subgraph an entity of its own, nothing shared).
// A size whose library time passes BENCH_COMPOSITION_CEILING_MS (default 15 s) ends its shape.
// Results: bench/results/composition.json. Options: BENCH_COMPOSITION_SIZES (10,20,30,40,50,60,70,
// 100,200), BENCH_COMPOSITION_RUNS (3: the median is kept).
import { parse } from 'graphql';
import { composeServices, compositionHasErrors } from '@theguild/federation-composition';
import { composeSubgraphs } from '../services/graph-registry/src/federation/composition.ts';
import { medianOf } from './lib/http-load.ts';
import { writeResults } from './lib/stats.ts';
import { subgraphSdl } from './lib/subgraph-sdl.ts';

const SIZES = (process.env.BENCH_COMPOSITION_SIZES ?? '10,20,30,40,50,60,70,100,200').split(',').map(Number);
const RUNS = Number(process.env.BENCH_COMPOSITION_RUNS ?? 3);
const CEILING_MS = Number(process.env.BENCH_COMPOSITION_CEILING_MS ?? 15_000);

type Shape = 'shared' | 'own';

function timed(run: () => void): number {
  const started = performance.now();
  run();
  return Number((performance.now() - started).toFixed(1));
}

interface SizeFigures {
  libraryMs: number;
  registryMs: number;
  /** What the registry adds around the library: registryMs − libraryMs. */
  aroundMs: number;
}

function measure(shape: Shape, size: number): SizeFigures {
  const subgraphs = Array.from({ length: size }, (_, k) => ({ name: `sub${k + 1}`, url: `http://sub${k + 1}.bench.svc:4000/graphql`, sdl: subgraphSdl(k + 1, { shared: shape === 'shared' }) }));
  // The previous public schema: the report compares against the supergraph of one subgraph fewer.
  const before = composeServices(subgraphs.slice(0, -1).map((subgraph) => ({ name: subgraph.name, url: subgraph.url, typeDefs: parse(subgraph.sdl) })));
  const previousApi = compositionHasErrors(before) ? undefined : before.publicSdl;
  const library: number[] = [];
  const registry: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    library.push(
      timed(() => {
        const result = composeServices(subgraphs.map((subgraph) => ({ name: subgraph.name, url: subgraph.url, typeDefs: parse(subgraph.sdl) })));
        if (compositionHasErrors(result)) throw new Error(`${shape} ${size}: ${result.errors[0]!.message}`);
      }),
    );
    registry.push(
      timed(() => {
        const result = composeSubgraphs(subgraphs, previousApi, subgraphs.at(-1)!.name);
        if (result.kind !== 'composed') throw new Error(`${shape} ${size}: ${result.kind}`);
      }),
    );
    if (library.at(-1)! > CEILING_MS) break;
  }
  const [libraryMs, registryMs] = [medianOf(library), medianOf(registry)];
  return { libraryMs, registryMs, aroundMs: Number((registryMs - libraryMs).toFixed(1)) };
}

const results: Record<Shape, Record<number, SizeFigures>> = { shared: {}, own: {} };
for (const shape of ['shared', 'own'] as const) {
  for (const size of SIZES) {
    const figures = measure(shape, size);
    results[shape][size] = figures;
    process.stdout.write(`${shape} ${size} subgraphs: library ${figures.libraryMs} ms, registry ${figures.registryMs} ms (around the library ${figures.aroundMs} ms)\n`);
    if (figures.libraryMs > CEILING_MS) break;
  }
}
writeResults('composition', {
  benchmark: 'graph-registry composition: the library alone against the registry composition job, by size and shape',
  date: new Date().toISOString(),
  node: process.version,
  setup: { sizes: SIZES, runs: RUNS, ceilingMs: CEILING_MS, shapes: { shared: 'every subgraph adds a field to one shared entity', own: 'each subgraph an entity of its own' } },
  results,
});
