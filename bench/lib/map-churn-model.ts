// A model of what a Map or Set churned by one add and one delete per call does to the garbage
// collector once its table is in the old generation (docs/benchmarks.md, "What survived the
// scavenges"): objects of ~0.7 KB kept 32 at a time, 1.2 million of them, with the chart's heap flags.
//   node --expose-gc --max-semi-space-size=8 --max-old-space-size=320 --trace-gc-nvp --import tsx \
//     bench/lib/map-churn-model.ts map|set|none | grep -c gc=mc
// map / set: the in-flight objects are also entries of a Map (id → object) or a Set; none: only
// the array that keeps 32 in flight. Sum `promoted=` over the `gc=s` lines to compare.
const mode = process.argv[2] ?? 'set';
interface Held {
  id: number;
  a: number[];
  b: { x: number; y: number[] };
  d: number[];
}

const byId = new Map<number, Held>();
const set = new Set<Held>();
const inFlight: Held[] = [];
let id = 0;
const call = (): Held => ({ id: id++, a: new Array<number>(16).fill(0), b: { x: 1, y: [1, 2, 3] }, d: new Array<number>(64).fill(id) });

function step(): void {
  for (let k = 0; k < 2000; k++) {
    const c = call();
    if (mode === 'map') byId.set(c.id, c);
    else if (mode === 'set') set.add(c);
    inFlight.push(c);
    if (inFlight.length <= 32) continue;
    const done = inFlight.shift()!;
    if (mode === 'map') byId.delete(done.id);
    else if (mode === 'set') set.delete(done);
  }
}

step();
// A mark-compact promotes every live object, the tables among them, as the service's first one does.
(globalThis as unknown as { gc: () => void }).gc();
let rounds = 0;
(function loop(): void {
  step();
  if (++rounds < 600) setImmediate(loop);
})();
