import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { infra } from './infra.js';
import { freePort } from './redis-server.js';
import { startTool } from './tool-process.js';

/** The Prometheus configuration for `make up` (scrapes its five management ports, loads the alert rules). */
export const localPrometheusConfig = fileURLToPath(new URL('../../observability/prometheus/prometheus.local.yml', import.meta.url));

/** One management port to scrape: `job` is the component's name, `namespace` and `pod` the labels a cluster would give it. */
export interface ScrapeTarget {
  job: string;
  address: string;
  namespace: string;
  pod: string;
}

interface PrometheusConfig {
  global: Record<string, string>;
  rule_files: string[];
  scrape_configs: Array<{ job_name: string; static_configs: Array<{ targets: string[]; labels: Record<string, string> }> }>;
}

/**
 * The local configuration (observability/prometheus/prometheus.local.yml) with the test's targets
 * in place of its fixed ports and a faster rhythm: scraping and rule evaluation every
 * `intervalSeconds`. The rules are the project's file as it is (an absolute path); only the
 * server's own intervals change, never a rule.
 */
export function prometheusConfigFor(targets: readonly ScrapeTarget[], intervalSeconds: number): string {
  const local = parse(readFileSync(localPrometheusConfig, 'utf8')) as PrometheusConfig;
  const interval = `${intervalSeconds}s`;
  const jobs = [...new Set(targets.map((target) => target.job))];
  const unknown = jobs.filter((job) => !local.scrape_configs.some((config) => config.job_name === job));
  if (unknown.length > 0) throw new Error(`${localPrometheusConfig} has no job ${unknown.join(', ')}`);
  const config: PrometheusConfig = {
    ...local,
    global: { ...local.global, scrape_interval: interval, scrape_timeout: interval, evaluation_interval: interval },
    rule_files: local.rule_files.map((file) => fileURLToPath(new URL(file, new URL('.', `file://${localPrometheusConfig}`)))),
    scrape_configs: local.scrape_configs
      .filter((config) => jobs.includes(config.job_name))
      .map((config) => ({
        ...config,
        static_configs: targets.filter((target) => target.job === config.job_name).map(({ address, namespace, pod }) => ({ targets: [address], labels: { namespace, pod } })),
      })),
  };
  return stringify(config);
}

/** A sample of an instant query: its labels and value. */
export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

/** An answer of the HTTP API: `success` with data, or `error` with the server's message. */
export type ApiAnswer<T> = { status: 'success'; data: T } | { status: 'error'; errorType: string; error: string };

export interface ActiveAlert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
  value: string;
}

export interface PrometheusServer {
  url: string;
  /** An instant query (GET /api/v1/query). */
  query(expr: string): Promise<ApiAnswer<{ resultType: string; result: Sample[] }>>;
  /** The series matching a selector (GET /api/v1/series), with all their labels. */
  series(match: string): Promise<Array<Record<string, string>>>;
  /** Alerts pending or firing (GET /api/v1/alerts). */
  alerts(): Promise<ActiveAlert[]>;
  /** The scrape targets and whether their last scrape worked. */
  targets(): Promise<Array<{ labels: Record<string, string>; health: string; lastError: string }>>;
  /** SIGKILL (test data only) and the data directory removed. */
  stop(): Promise<void>;
}

async function api<T>(url: string): Promise<ApiAnswer<T>> {
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return (await response.json()) as ApiAnswer<T>;
}

async function data<T>(url: string): Promise<T> {
  const answer = await api<T>(url);
  if (answer.status !== 'success') throw new Error(`${url}: ${answer.errorType} ${answer.error}`);
  return answer.data;
}

/**
 * The real Prometheus server (Debian's package, unpacked by test/infra/deploy-tools.sh) on a free
 * loopback port with the given configuration and a temporary TSDB.
 */
export async function startPrometheus(configYaml: string): Promise<PrometheusServer> {
  const dir = mkdtempSync(join(tmpdir(), 'sp-prometheus-'));
  const configFile = join(dir, 'prometheus.yml');
  writeFileSync(configFile, configYaml);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const tool = startTool(infra('PROMETHEUS_BIN'), [`--config.file=${configFile}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn']);
  const stop = async (): Promise<void> => {
    await tool.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await tool.waitForHttp(`${url}/-/ready`);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    query: (expr) => api(`${url}/api/v1/query?${new URLSearchParams({ query: expr }).toString()}`),
    series: (match) => data(`${url}/api/v1/series?${new URLSearchParams({ 'match[]': match }).toString()}`),
    alerts: async () => (await data<{ alerts: ActiveAlert[] }>(`${url}/api/v1/alerts`)).alerts,
    targets: async () =>
      (await data<{ activeTargets: Array<{ labels: Record<string, string>; health: string; lastError: string }> }>(`${url}/api/v1/targets?state=active`)).activeTargets,
    stop,
  };
}
