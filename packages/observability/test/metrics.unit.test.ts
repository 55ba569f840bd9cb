import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { platformVersion } from '../src/build-info.js';
import { counterFromZero, createRegistry } from '../src/metrics.js';

describe('counterFromZero', () => {
  it('should expose every combination of the known label values at 0 before the first event', async () => {
    const registry = new Registry();
    const counter = counterFromZero(registry, { name: 'things_total', help: 'Things', labels: { source: ['sweep', 'replay'], result: ['ok', 'failed'] } });
    counter.inc({ source: 'replay', result: 'failed' });
    const text = await registry.metrics();
    expect(text.split('\n').filter((line) => line.startsWith('things_total')).sort()).toEqual([
      'things_total{source="replay",result="failed"} 1',
      'things_total{source="replay",result="ok"} 0',
      'things_total{source="sweep",result="failed"} 0',
      'things_total{source="sweep",result="ok"} 0',
    ]);
  });
});

describe('createRegistry', () => {
  it('should carry the platform version as subscription_platform_build_info, labelled with the service', async () => {
    const text = await createRegistry('some-service').metrics();
    const root = JSON.parse(readFileSync(join(import.meta.dirname, '../../../package.json'), 'utf8')) as { version: string };
    expect(platformVersion()).toBe(root.version);
    expect(text.split('\n').filter((line) => line.startsWith('subscription_platform_build_info'))).toEqual([
      `subscription_platform_build_info{version="${root.version}",service="some-service"} 1`,
    ]);
  });
});
