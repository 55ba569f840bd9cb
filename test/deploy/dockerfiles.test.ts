import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { adminKubeConfig, ensureNamespace, uniqueName } from '../support/kube-apiserver.js';
import { infra } from '../support/infra.js';
import { startGraphqlGateway, type GraphqlGatewayFixture } from '../support/graphql-gateway.js';
import { startLocalizationService, type LocalizationServiceFixture } from '../support/localization-service.js';
import { ALLOCATOR_SETTINGS, makeUpSettings } from '../support/make-up-settings.js';
import { npmStart, startService, type ServiceProcess } from '../support/service-process.js';
import { dockerignore, execForm, parseDockerfile } from './support/dockerfile.js';
import { assembleImage, type ImageBundle } from './support/image-bundle.js';
import { repoRoot, services, type Service } from './support/service-config.js';
import { serviceEnv, type Dependencies } from './support/service-env.js';
import { HANG_GUARD_MS } from '../support/progress.js';

const dockerfilePath = join(repoRoot, 'Dockerfile');

/** The files a patch-package patch changes (node_modules/…) and the lines it adds. */
function patchedLines(patch: string): { files: string[]; added: string[] } {
  const lines = patch.split('\n');
  const files = lines.filter((line) => line.startsWith('+++ b/')).map((line) => line.slice('+++ b/'.length));
  const added = lines.filter((line) => line.startsWith('+') && !line.startsWith('+++') && line.trim() !== '+').map((line) => line.slice(1));
  return { files, added };
}
const withEntryPoint = services.filter((service) => existsSync(join(repoRoot, 'services', service, 'src/main.ts')));

describe('the Dockerfile', () => {
  it("should be the services' only one, at the repository root: the service is a build argument", () => {
    const dockerfiles = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*Dockerfile*', '**/Dockerfile*'], { cwd: repoRoot, encoding: 'utf8' }).trim().split('\n');
    // Besides it, Hive Gateway's (gateway/, an npm project of a third party's gateway, not a service).
    expect(dockerfiles).toEqual(['Dockerfile', 'gateway/Dockerfile']);
    const file = parseDockerfile(dockerfilePath);
    // No default: a build that forgets --build-arg SERVICE fails instead of building some service.
    expect(file.globalArgs).toHaveProperty('SERVICE', '');
    // A stage sees SERVICE only where it declares it.
    const usesService = (stage: (typeof file.stages)[number]) => stage.instructions.some((i) => i.keyword !== 'ARG' && /\$\{?SERVICE\b/.test(i.args));
    const declaresService = (stage: (typeof file.stages)[number]) => stage.instructions.some((i) => i.keyword === 'ARG' && i.args === 'SERVICE');
    expect(file.stages.filter(usesService).every(declaresService)).toBe(true);
  });

  it('should build in stages from a pinned Node.js 24 slim image, the version the tests run on', () => {
    const file = parseDockerfile(dockerfilePath);
    const image = file.globalArgs.NODE_IMAGE!;
    expect(image).toMatch(/^node:24\.\d+\.\d+-[a-z]+-slim$/);
    const toolchain = readFileSync(join(repoRoot, 'test/infra/toolchain.sh'), 'utf8');
    expect(image.slice('node:'.length).split('-')[0]).toBe(/^NODE_VERSION=(\S+)$/m.exec(toolchain)![1]);
    expect(file.stages.length).toBeGreaterThanOrEqual(3);
    expect(file.stages.every((stage) => stage.from === '${NODE_IMAGE}' || file.stages.some((s) => s.name === stage.from))).toBe(true);
  });

  it("should build Hive Gateway's image on the services' Node image, one stage, as a non-root user", () => {
    const gateway = parseDockerfile(join(repoRoot, 'gateway/Dockerfile'));
    expect(gateway.globalArgs.NODE_IMAGE).toBe(parseDockerfile(dockerfilePath).globalArgs.NODE_IMAGE);
    expect(gateway.stages.map((stage) => stage.from)).toEqual(['${NODE_IMAGE}']);
    expect(gateway.stages[0]!.instructions.filter((i) => i.keyword === 'USER').map((i) => i.args)).toEqual(['1000:1000']);
  });

  it('should refuse to build without a SERVICE that is a folder of services/', () => {
    const file = parseDockerfile(dockerfilePath);
    const guard = file.stages.flatMap((stage) => stage.instructions).find((i) => i.keyword === 'RUN' && i.args.includes('--build-arg SERVICE='))!.args;
    const attempt = (service: string): number => {
      try {
        execFileSync('sh', ['-c', guard], { cwd: repoRoot, env: { ...process.env, SERVICE: service }, stdio: 'pipe' });
        return 0;
      } catch (error) {
        return (error as { status: number }).status;
      }
    };
    expect({ none: attempt(''), unknown: attempt('billing'), cache: attempt('cache') }).toEqual({ none: 1, unknown: 1, cache: 0 });
  });

  it('should install and compile the workspace in a stage without SERVICE, so the five builds share it', () => {
    const build = parseDockerfile(dockerfilePath).stages[0]!.instructions;
    expect(build.filter((i) => i.keyword === 'RUN').map((i) => i.args)).toEqual(['npm install', 'npx tsc --build']);
    expect(build.some((i) => (i.keyword === 'ARG' && i.args === 'SERVICE') || /\$\{?SERVICE\b/.test(i.args))).toBe(false);
  });

  it.each(services)('should run %s as uid 1000 with its start script as exec-form entry point, and no HEALTHCHECK', (service) => {
    const file = parseDockerfile(dockerfilePath);
    const final = file.stages.at(-1)!;
    const keyword = (name: string) => final.instructions.filter((i) => i.keyword === name);
    expect(keyword('USER').map((i) => i.args)).toEqual(['1000:1000']);
    expect(keyword('WORKDIR').map((i) => i.args)).toEqual(['/app/services/${SERVICE}']);
    expect(execForm(keyword('ENTRYPOINT')[0]!.args)).toEqual(['node', ...npmStart(service).args]);
    expect(file.text).not.toMatch(/^\s*HEALTHCHECK/m);
    expect(keyword('COPY').map((i) => i.args)).toEqual(['--from=production /bundle/ /app/']);
    expect(keyword('EXPOSE').map((i) => i.args)).toEqual(['9464']);
  });

  it('should install production dependencies only in the final image, with the install command the Makefile uses', () => {
    const file = parseDockerfile(dockerfilePath);
    const runs = file.stages.flatMap((stage) => stage.instructions.filter((i) => i.keyword === 'RUN').map((i) => ({ stage: stage.name, args: i.args })));
    const build = runs.filter((r) => r.stage === 'build').map((r) => r.args);
    expect(build).toEqual(['npm install', 'npx tsc --build']);
    const production = runs.filter((r) => r.stage === 'production').map((r) => r.args);
    expect(production).toContainEqual(expect.stringMatching(/npm install --omit=dev --workspace "services\/\$\{SERVICE\}" --include-workspace-root=false/));
    expect(runs.filter((r) => /\bnpm ci\b/.test(r.args))).toEqual([]);
    // The Makefile's install runs test/infra/npm.sh's root project, whose command is npm install.
    expect(readFileSync(join(repoRoot, 'Makefile'), 'utf8')).toMatch(/^\t@bash test\/infra\/npm\.sh install root$/m);
    const rootProject = /^\s*root\)$([\s\S]*?);;$/m.exec(readFileSync(join(repoRoot, 'test/infra/npm.sh'), 'utf8'))?.[1];
    expect(rootProject).toMatch(/^\s*INSTALL=\(npm install /m);
  });

  it('should preload Debian\'s jemalloc in every image from one pinned layer before SERVICE, with the settings make up gives the services', () => {
    const final = parseDockerfile(dockerfilePath).stages.at(-1)!.instructions;
    const install = final.findIndex((i) => i.keyword === 'RUN' && /\blibjemalloc2=\d\S*/.test(i.args));
    // Before ARG SERVICE: the five images share the layer instead of installing it five times.
    expect({ install: install >= 0, beforeService: install < final.findIndex((i) => i.keyword === 'ARG' && i.args === 'SERVICE') }).toEqual({ install: true, beforeService: true });
    const env: Record<string, string> = {};
    for (const i of final.filter((i) => i.keyword === 'ENV')) {
      const [name, ...value] = i.args.split('=');
      if (ALLOCATOR_SETTINGS.includes(name!)) env[name!] = value.join('=');
    }
    // By name: the loader finds it on its own path, whatever the architecture's library folder.
    expect(env.LD_PRELOAD).toBe('libjemalloc.so.2');
    // Without the background thread, freed pages go back only when an allocation happens to purge.
    expect(env.MALLOC_CONF).toMatch(/\bbackground_thread:true\b/);
    for (const service of withEntryPoint) {
      const settings = makeUpSettings(service);
      const allocator = Object.fromEntries(ALLOCATOR_SETTINGS.filter((name) => name in settings).map((name) => [name, settings[name]]));
      expect({ service, allocator }).toEqual({ service, allocator: env });
    }
  });

  it('should keep local installs, builds, state and secrets out of the build context', () => {
    const ignored = dockerignore(join(repoRoot, '.dockerignore'));
    for (const path of ['node_modules/x', 'services/cache/node_modules/y', 'services/cache/dist/main.js', '.cache/run/infra.env', '.git/HEAD', 'services/cache/test/a.test.ts', 'charts/x', 'k8s/y', 'packages/core/tsconfig.tsbuildinfo', 'x/.env']) {
      expect({ path, ignored: ignored(path) }).toEqual({ path, ignored: true });
    }
    for (const path of ['package.json', 'package-lock.json', 'tsconfig.base.json', 'proto/cache/v1/cache.proto', 'packages/http/src/index.ts', 'services/cache/src/main.ts', 'services/cache/tsconfig.json']) {
      expect({ path, ignored: ignored(path) }).toEqual({ path, ignored: false });
    }
  });
});

describe('the images built without a container engine', () => {
  let workdir: string;
  const bundles = new Map<Service, ImageBundle>();
  const running = new Map<Service, ServiceProcess>();
  const exitCodes = new Map<Service, number | null>();
  let gateway: GraphqlGatewayFixture | undefined;
  let localization: LocalizationServiceFixture | undefined;

  beforeAll(async () => {
    // Beside the install cache (.cache/deploy-test), so both are on one filesystem for hard links.
    const scratch = join(repoRoot, '.cache/deploy-test');
    mkdirSync(scratch, { recursive: true });
    // Folders left by an interrupted run (an hour is longer than any run).
    for (const stale of readdirSync(scratch).filter((name) => name.startsWith('work-') && Date.now() - statSync(join(scratch, name)).mtimeMs > 3_600_000)) {
      rmSync(join(scratch, stale), { recursive: true, force: true });
    }
    workdir = mkdtempSync(join(scratch, 'work-'));
    // Two production installs at a time: the machine has two cores, shared.
    const queue = [...withEntryPoint];
    const worker = async (): Promise<void> => {
      for (let service = queue.shift(); service; service = queue.shift()) bundles.set(service, await assembleImage(service, join(workdir, service)));
    };
    await Promise.all([worker(), worker()]);
    gateway = await startGraphqlGateway();
    localization = await startLocalizationService();
    // The real kube-apiserver of make test, as its admin; a namespace of its own for the Lease and the watch.
    const kubeNamespace = uniqueName('deploy');
    await ensureNamespace(adminKubeConfig(), kubeNamespace);
    const kubeconfig = infra('KUBECONFIG_PATH');
    const deps: Dependencies = { gatewayUrl: gateway.url, localizationUrl: localization.url, kubeconfig, kubeNamespace };
    for (const service of withEntryPoint) {
      const bundle = bundles.get(service)!;
      const [node, ...args] = bundle.entrypoint;
      expect(node).toBe('node');
      const env = { ...bundle.env, ...serviceEnv(service, deps), ...(service === 'cache' ? { Otlp__Endpoint: 'http://127.0.0.1:9' } : {}) };
      const started = await startService({ name: service, cwd: bundle.workdir, args, env });
      running.set(service, started);
      if (service === 'cache') deps.cacheAddress = `127.0.0.1:${started.port}`;
      if (service === 'graph-registry') deps.registryUrl = `http://127.0.0.1:${started.port}`;
    }
  }, HANG_GUARD_MS);

  afterAll(async () => {
    await Promise.all([...running.values()].map((service) => service.stop(5000)));
    await Promise.all([gateway?.close(), localization?.close()]);
    if (workdir) rmSync(workdir, { recursive: true, force: true });
  }, 60_000);

  it('should assemble an image for every service that has an entry point', () => {
    expect([...bundles.keys()].sort()).toEqual([...withEntryPoint].sort());
  });

  it.each(withEntryPoint)('should put only what runs into the %s image: dist, production node_modules, package.json, proto', (service) => {
    const bundle = bundles.get(service)!;
    const app = join(bundle.rootfs, 'app');
    expect(relative(bundle.rootfs, bundle.workdir)).toBe(`app/services/${service}`);
    expect(readdirSync(app).sort()).toEqual(['node_modules', 'package.json', 'packages', 'proto', 'services']);
    expect(readdirSync(join(app, 'services'))).toEqual([service]);
    expect(readdirSync(join(app, 'services', service)).filter((entry) => entry !== 'node_modules').sort()).toEqual(['dist', 'package.json']);
    expect(existsSync(join(app, 'proto/cache/v1/cache.proto'))).toBe(true);
    for (const dev of ['typescript', 'jest', 'eslint', '@swc/core', '@swc/jest', 'fast-check', 'autocannon', 'patch-package']) {
      expect({ dev, installed: existsSync(join(app, 'node_modules', dev)) }).toEqual({ dev, installed: false });
    }
    for (const link of readdirSync(join(app, 'node_modules/@sp'))) {
      const path = join(app, 'node_modules/@sp', link);
      expect(lstatSync(path).isSymbolicLink()).toBe(true);
      expect(realpathSync(path).startsWith(realpathSync(app))).toBe(true);
      expect(existsSync(join(path, 'dist'))).toBe(true);
    }
    const sources = execFileSync('find', [app, '-path', '*/node_modules', '-prune', '-o', '-name', '*.ts', '-print'], { encoding: 'utf8' }).trim();
    expect(sources).toBe('');
  });

  /** The patched files of patches/ that `service`'s image installs (a service that does not use the package has none of them). */
  const patchedFilesIn = (service: Service): Array<{ patch: string; file: string; missing: string[] }> => {
    const app = join(bundles.get(service)!.rootfs, 'app');
    return readdirSync(join(repoRoot, 'patches'))
      .filter((name) => name.endsWith('.patch'))
      .flatMap((patch) => {
        const { files, added } = patchedLines(readFileSync(join(repoRoot, 'patches', patch), 'utf8'));
        return files.filter((file) => existsSync(join(app, file))).map((file) => ({ patch, file, missing: added.filter((line) => !readFileSync(join(app, file), 'utf8').includes(line)) }));
      });
  };

  it.each(withEntryPoint)('should carry the fixes of patches/ in the %s image\'s dependencies, as the repository\'s install does', (service) => {
    for (const { patch, file, missing } of patchedFilesIn(service)) expect({ patch, file, missing }).toEqual({ patch, file, missing: [] });
  });

  it('should install every patched package in the images of the services that use it (kafkajs: those that publish events)', () => {
    const carrying = (patch: string): string[] => withEntryPoint.filter((service) => patchedFilesIn(service).some((entry) => entry.patch === patch)).sort();
    expect(carrying('kafkajs+2.2.4.patch')).toEqual(['auth', 'graph-registry', 'webhooks']);
  });

  it.each(withEntryPoint)('should start %s from its image bundle and answer /livez and /readyz on the management port', async (service) => {
    const process = running.get(service)!;
    expect(await process.management('/livez')).toEqual({ status: 200, body: JSON.stringify({ status: 'ok' }) });
    let ready = await process.management('/readyz');
    for (let i = 0; i < 50 && ready.status !== 200; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      ready = await process.management('/readyz');
    }
    expect({ service, ...ready }).toEqual({ service, status: 200, body: expect.stringContaining('"status":"ok"') });
  });

  it.each(withEntryPoint)('should stop %s cleanly on SIGTERM, as Kubernetes stops a pod', async (service) => {
    const process = running.get(service)!;
    if (!exitCodes.has(service)) exitCodes.set(service, (await process.stop(15_000)).code);
    expect({ service, exit: exitCodes.get(service) }).toEqual({ service, exit: 0 });
  });
});
