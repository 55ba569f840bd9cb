import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { infra } from './infra.js';
import { spansOf, type OtlpTraces, type ReceivedSpan } from './otlp-receiver.js';
import { freePorts } from './free-port.js';
import { startTool } from './tool-process.js';

/** The project's example configuration (observability/otel-collector/config.yaml). */
export const collectorConfig = fileURLToPath(new URL('../../observability/otel-collector/config.yaml', import.meta.url));

/** What the example reads from the pod's environment (the Downward API gives MY_POD_IP in a cluster). */
const podEnv = { MY_POD_IP: '127.0.0.1' };

/** `otelcol-sp validate` of configuration files (merged in order, as the collector does): its exit code and output. */
export async function validateCollectorConfig(files: readonly string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(infra('OTELCOL_BIN'), ['validate', ...files.map((file) => `--config=${file}`)], { env: { ...process.env, ...podEnv } });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const failure = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failure.code === 'number' ? failure.code : 1, output: (failure.stdout ?? '') + (failure.stderr ?? '') };
  }
}

export interface RunningCollector {
  /** The OTLP/HTTP receiver, for `Otlp__Endpoint`. */
  otlpHttpUrl: string;
  /** The spans the file exporter wrote so far. */
  receivedSpans(): ReceivedSpan[];
  stop(): Promise<void>;
}

/**
 * The example configuration with only what needs a cluster swapped for the test: receivers and
 * the health check on free loopback ports; traces through the example's processors except
 * k8sattributes (it asks the Kubernetes API about pods) into a file exporter the test reads; the
 * Prometheus receiver (pod discovery) and remote write left out of the metrics pipeline; the
 * collector's own metrics endpoint (:8888 by default) off. Merged over the example by the
 * collector itself (a second --config), so everything else is the example as shipped.
 */
function testOverrides(ports: { http: number; grpc: number; health: number }, file: string): string {
  return stringify({
    extensions: { health_check: { endpoint: `127.0.0.1:${ports.health}` } },
    receivers: { otlp: { protocols: { http: { endpoint: `127.0.0.1:${ports.http}` }, grpc: { endpoint: `127.0.0.1:${ports.grpc}` } } } },
    exporters: { 'file/e2e': { path: file, flush_interval: '100ms' } },
    service: {
      telemetry: { metrics: { level: 'none' } },
      pipelines: {
        traces: { receivers: ['otlp'], processors: ['memory_limiter', 'resource', 'batch'], exporters: ['file/e2e'] },
        metrics: { receivers: ['otlp'], processors: ['memory_limiter', 'batch'], exporters: ['debug'] },
      },
    },
  });
}

/** The collector built by test/infra/otelcol.sh, running the example configuration with the test's overrides. */
export async function startCollector(): Promise<RunningCollector> {
  const dir = mkdtempSync(join(tmpdir(), 'sp-otelcol-'));
  const traces = join(dir, 'traces.jsonl');
  const [http = 0, grpc = 0, health = 0] = await freePorts(3);
  const ports = { http, grpc, health };
  writeFileSync(join(dir, 'test.yaml'), testOverrides(ports, traces));
  const tool = startTool(infra('OTELCOL_BIN'), [`--config=${collectorConfig}`, `--config=${join(dir, 'test.yaml')}`], { ...process.env, ...podEnv });
  const stop = async (): Promise<void> => {
    await tool.stop('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await tool.waitForHttp(`http://127.0.0.1:${ports.health}/`);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    otlpHttpUrl: `http://127.0.0.1:${ports.http}`,
    receivedSpans: () =>
      existsSync(traces)
        ? readFileSync(traces, 'utf8')
            .split('\n')
            // Only whole lines: the exporter may be half way through writing the last one.
            .slice(0, -1)
            .filter((line) => line.trim() !== '')
            .flatMap((line) => spansOf(JSON.parse(line) as OtlpTraces))
        : [],
    stop,
  };
}
