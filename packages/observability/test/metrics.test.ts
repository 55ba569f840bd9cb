import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { counterFromZero } from '../src/metrics.js';

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
