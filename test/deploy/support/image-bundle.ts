import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { buildAll } from './build.js';
import { dockerignore, execForm, parseDockerfile, stageArgs, substitute, type Instruction } from './dockerfile.js';
import { repoRoot, type Service } from './service-config.js';

const run = promisify(execFile);

/** What the image's last stage holds, assembled on the local filesystem. */
export interface ImageBundle {
  service: Service;
  /** The final stage's root filesystem (only what its COPY instructions put there). */
  rootfs: string;
  /** WORKDIR of the final stage, inside rootfs. */
  workdir: string;
  /** ENTRYPOINT, exec form. */
  entrypoint: string[];
  env: Record<string, string>;
  user: string | undefined;
  expose: string[];
}

interface StageState {
  fs: string;
  cwd: string;
  env: Record<string, string>;
  args: Record<string, string>;
}

/** COPY of one source: a directory's contents go into dest; a file goes into dest/ or becomes dest. */
function copyInto(source: string, dest: string, into: boolean, filter?: (source: string) => boolean): void {
  if (statSync(source).isDirectory()) {
    mkdirSync(dest, { recursive: true });
    cpSync(source, dest, { recursive: true, verbatimSymlinks: true, filter });
  } else {
    const file = into ? join(dest, source.split('/').at(-1)!) : dest;
    mkdirSync(dirname(file), { recursive: true });
    cpSync(source, file);
  }
}

interface Build {
  service: Service;
  states: Map<string, StageState>;
  contextFilter: (source: string) => boolean;
  bundle: Partial<ImageBundle>;
}

/** One instruction of a stage; `isBuildStage` marks the first stage (see assembleImage). */
async function carryOut(build: Build, state: StageState, instruction: Instruction, isBuildStage: boolean): Promise<void> {
  const text = substitute(instruction.args, { ...state.args, ...state.env });
  const handlers: Record<string, () => Promise<void> | void> = {
    ARG: () => undefined,
    ENV: () => {
      for (const pair of text.match(/[A-Za-z_][A-Za-z0-9_]*=("[^"]*"|\S+)/g) ?? []) {
        const [key, ...value] = pair.split('=');
        state.env[key!] = value.join('=').replace(/^"|"$/g, '');
      }
    },
    WORKDIR: () => {
      state.cwd = isAbsolute(text) ? join(state.fs, text) : join(state.cwd, text);
      mkdirSync(state.cwd, { recursive: true });
    },
    COPY: () => copy(text, state, build),
    // The shell expands the script's variables (from the stage's ARG and ENV), as in docker.
    RUN: () => (isBuildStage ? buildStageRun(text, state) : cachedShell(instruction.args, state)),
    USER: () => void (build.bundle.user = text),
    EXPOSE: () => void (build.bundle.expose = text.split(/\s+/)),
    ENTRYPOINT: () => void (build.bundle.entrypoint = execForm(instruction.args)),
    LABEL: () => undefined,
  };
  const handler = handlers[instruction.keyword];
  if (!handler) throw new Error(`Dockerfile:${instruction.line}: ${instruction.keyword} is not carried out by this test`);
  await handler();
}

/** A stage's filesystem and variables: its parent stage's, or a fresh folder for an image. */
function stageState(parent: StageState | undefined, fresh: string, args: Record<string, string>): StageState {
  if (parent) return { ...parent, env: { ...parent.env }, args };
  mkdirSync(fresh, { recursive: true });
  return { fs: fresh, cwd: fresh, env: {}, args };
}

/**
 * Carries out the Dockerfile for one service (build argument SERVICE) without a container engine, stage by stage, in a
 * temporary folder: COPY from the build context (honouring .dockerignore) and between stages,
 * WORKDIR, ENV, ARG, and RUN through `sh -c` with the stage's variables. The build stage's RUNs
 * (`npm install` of the whole tree, then `tsc --build` of all of it) are the repository's own
 * state after `make build`: its compile step runs here in the repository (incremental), and the
 * compiled dist folders are copied in. Every later RUN runs as written, so the production install
 * (`npm install --omit=dev --workspace ...`) and the bundle assembly are the image's own.
 */
export async function assembleImage(service: Service, workdir: string): Promise<ImageBundle> {
  const file = parseDockerfile(join(repoRoot, 'Dockerfile'));
  const ignored = dockerignore(join(repoRoot, '.dockerignore'));
  const build: Build = {
    service,
    states: new Map(),
    contextFilter: (source) => relative(repoRoot, source) === '' || !ignored(relative(repoRoot, source)),
    bundle: { service, env: {}, expose: [] },
  };
  let last: StageState | undefined;
  for (const [index, stage] of file.stages.entries()) {
    const args = { ...file.globalArgs, ...stageArgs(file, stage, { SERVICE: service }) };
    const state = stageState(build.states.get(stage.from), join(workdir, `stage-${index}`), args);
    for (const instruction of stage.instructions) await carryOut(build, state, instruction, index === 0);
    if (stage.name) build.states.set(stage.name, state);
    last = state;
  }
  if (!last || !build.bundle.entrypoint) throw new Error(`Dockerfile: no final stage with an exec-form ENTRYPOINT (SERVICE=${service})`);
  return { ...(build.bundle as ImageBundle), rootfs: last.fs, workdir: last.cwd, env: last.env };
}

/** COPY [--from=stage] src... dest */
function copy(text: string, state: StageState, build: Build): void {
  const words = text.split(/\s+/);
  const paths = words.filter((word) => !word.startsWith('--'));
  const dest = paths.pop()!;
  const source = sourceStage(words, build);
  const target = isAbsolute(dest) ? join(state.fs, dest) : join(state.cwd, dest);
  const into = dest.endsWith('/') || paths.length > 1;
  for (const path of paths) {
    const origin = join(source?.fs ?? repoRoot, path);
    if (!existsSync(origin)) throw new Error(`COPY ${path}: not found in ${source ? 'the stage' : 'the build context'}`);
    if (source) linkInto(origin, target, into);
    else copyInto(origin, target, into, build.contextFilter);
  }
}

/** The stage of COPY --from=<stage>, or undefined for the build context. */
function sourceStage(words: readonly string[], build: Build): StageState | undefined {
  const from = words.find((word) => word.startsWith('--from='))?.slice('--from='.length);
  if (from === undefined) return undefined;
  const stage = build.states.get(from);
  if (!stage) throw new Error(`COPY --from=${from}: no such stage`);
  return stage;
}

/** Between stages: hard links (the earlier stage is not used again), as fast as a layer. */
function linkInto(origin: string, target: string, into: boolean): void {
  if (!statSync(origin).isDirectory()) return copyInto(origin, target, into);
  mkdirSync(target, { recursive: true });
  execFileSync('cp', ['-a', '--link', `${origin.replace(/\/$/, '')}/.`, target]);
}

async function shell(script: string, state: StageState): Promise<void> {
  // Outside a container an absolute path would reach the machine's own root: paths come from
  // variables (mapped into the stage's folder below) or are relative to WORKDIR.
  if (/(^|[\s"'=;(])\/(?!dev\/null)/.test(script)) throw new Error(`RUN with an absolute path cannot be carried out here: ${script}`);
  const mapped = Object.fromEntries(Object.entries(state.args).map(([key, value]) => [key, isAbsolute(value) ? join(state.fs, value) : value]));
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    // How this machine reaches the registry (its CA and proxies), as the builder's network would.
    ...Object.fromEntries(Object.entries(process.env).filter(([key]) => /^(NODE_EXTRA_CA_CERTS|SSL_CERT_(FILE|DIR)|(HTTPS?|NO)_PROXY|(https?|no)_proxy)$/.test(key))),
    // The machine's npm cache stands in for the registry the image build would reach.
    npm_config_prefer_offline: 'true',
    ...state.env,
    ...mapped,
  };
  try {
    await run('/bin/sh', ['-c', script], { cwd: state.cwd, env, maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const failure = err as { stdout?: string; stderr?: string };
    throw new Error(`RUN ${script}\nfailed:\n${failure.stdout ?? ''}${failure.stderr ?? ''}`);
  }
}

const layerCache = join(repoRoot, '.cache/deploy-test/npm-layers');
/** One production install per service of the current lock file. */
const KEPT_LAYERS = 5;

/** Every file under BASE/DIR (path relative to BASE, and content) into HASH, in a stable order. */
function hashTree(hash: ReturnType<typeof createHash>, base: string, dir: string): void {
  if (!existsSync(join(base, dir))) return;
  for (const name of readdirSync(join(base, dir)).sort()) {
    const path = join(dir, name);
    hash.update(path);
    if (statSync(join(base, path)).isDirectory()) hashTree(hash, base, path);
    else hash.update(readFileSync(join(base, path)));
  }
}

/**
 * What a RUN that npm installs reads: the RUN line, its variables, every package.json and the
 * lock, the patches, and the compiled dist folders (the production step bundles them).
 */
function installKey(script: string, state: StageState): string {
  const hash = createHash('sha256').update(script).update(JSON.stringify({ args: state.args, env: state.env, node: process.version }));
  const manifests = ['package.json', 'package-lock.json'];
  const dists: string[] = [];
  for (const group of ['packages', 'services']) {
    for (const name of existsSync(join(state.cwd, group)) ? readdirSync(join(state.cwd, group)).sort() : []) {
      manifests.push(join(group, name, 'package.json'));
      dists.push(join(group, name, 'dist'));
    }
  }
  // The root package's postinstall applies patches/ to what was installed.
  const patches = existsSync(join(state.cwd, 'patches')) ? readdirSync(join(state.cwd, 'patches')).sort().map((name) => join('patches', name)) : [];
  for (const file of [...manifests, ...patches]) if (existsSync(join(state.cwd, file))) hash.update(file).update(readFileSync(join(state.cwd, file)));
  for (const dist of dists) hashTree(hash, state.cwd, dist);
  return hash.digest('hex').slice(0, 32);
}

/**
 * A RUN, with a layer cache for npm installs like docker's: such a RUN writes only new folders at
 * the stage's root (the Dockerfile's production step: its bundle); they are kept under
 * .cache/deploy-test, keyed by what the RUN reads, and linked back in when nothing it reads
 * changed. Other RUNs always run.
 */
async function cachedShell(script: string, state: StageState): Promise<void> {
  if (/^apt-get update\b/.test(script)) return machinePackages(script);
  if (!/\bnpm install\b/.test(script)) return shell(script, state);
  const key = installKey(script, state);
  const layer = join(layerCache, key);
  // A layer without its tree is what a run cut off mid-install left (its work folder removed under it).
  if (existsSync(join(layer, '.complete')) && existsSync(join(layer, 'tree'))) {
    execFileSync('cp', ['-a', '--link', `${layer}/tree/.`, state.fs]);
    const now = new Date();
    utimesSync(layer, now, now);
    return;
  }
  const before = new Set(readdirSync(state.fs));
  await shell(script, state);
  const staging = `${layer}.${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(join(staging, 'tree'), { recursive: true });
  for (const created of readdirSync(state.fs).filter((name) => !before.has(name))) {
    execFileSync('cp', ['-a', '--link', join(state.fs, created), join(staging, 'tree', created)]);
  }
  execFileSync('touch', [join(staging, '.complete')]);
  rmSync(layer, { recursive: true, force: true });
  renameSync(staging, layer);
  const layers = readdirSync(layerCache).filter((name) => /^[0-9a-f]{32}$/.test(name));
  layers.sort((a, b) => statSync(join(layerCache, b)).mtimeMs - statSync(join(layerCache, a)).mtimeMs);
  for (const old of layers.slice(KEPT_LAYERS)) rmSync(join(layerCache, old), { recursive: true, force: true });
}

/**
 * A RUN that installs Debian packages (name=version) into the image: outside a container it cannot
 * write the system, so the machine's own packages stand in (the services started from the bundle
 * load them, as LD_PRELOAD's jemalloc): each must be installed here at the pinned version.
 */
function machinePackages(script: string): void {
  const pinned = [...script.matchAll(/\s([a-z0-9][a-z0-9.+-]*)=(\S+)/g)].map(([, name, version]) => ({ name: name!, version: version! }));
  if (pinned.length === 0) throw new Error(`RUN ${script}: installs no pinned package (name=version)`);
  for (const { name, version } of pinned) {
    let installed = '';
    try {
      installed = execFileSync('dpkg-query', ['-W', '-f=${Version}', name], { encoding: 'utf8' });
    } catch {
      // Not installed: reported below.
    }
    if (installed !== version) {
      throw new Error(`the image installs ${name}=${version}; this machine has ${installed === '' ? 'none' : installed} ('bash test/infra/infra.sh install' installs it: its allocator step)`);
    }
  }
}

/** The build stage's RUN: the repository's install and compile stand in for it (see assembleImage). */
async function buildStageRun(script: string, state: StageState): Promise<void> {
  // The whole workspace's install: the repository's own `make install` stands for it, its
  // node_modules linked in (a later stage lends its tools, as patch-package, from there).
  if (script === 'npm install') {
    execFileSync('cp', ['-a', '--link', join(repoRoot, 'node_modules'), join(state.cwd, 'node_modules')]);
    return;
  }
  if (script !== 'npx tsc --build') {
    throw new Error(`the build stage's RUNs are expected to npm install the workspace, then tsc --build all of it: ${script}`);
  }
  await buildAll();
  for (const dir of ['packages', 'services']) {
    for (const name of existsSync(join(state.cwd, dir)) ? readdirSync(join(state.cwd, dir)) : []) {
      const dist = join(repoRoot, dir, name, 'dist');
      if (existsSync(dist)) cpSync(dist, join(state.cwd, dir, name, 'dist'), { recursive: true });
    }
  }
}
