import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('GATEWAY_HEAP_GROWTH_PERCENT', () => {
  it('bounds the heap growth at 25% unless told otherwise', () => {
    expect(loadConfig({}).heapGrowthPercent).toBe(25);
    expect(loadConfig({ GATEWAY_HEAP_GROWTH_PERCENT: '' }).heapGrowthPercent).toBe(25);
  });

  it('takes 0 (V8 decides) and other whole percentages', () => {
    expect(loadConfig({ GATEWAY_HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent).toBe(0);
    expect(loadConfig({ GATEWAY_HEAP_GROWTH_PERCENT: '50' }).heapGrowthPercent).toBe(50);
  });

  it('refuses what is not a percentage, naming the variable', () => {
    for (const value of ['-1', '12.5', 'lots', '401']) {
      expect(() => loadConfig({ GATEWAY_HEAP_GROWTH_PERCENT: value })).toThrow(ConfigError);
      expect(() => loadConfig({ GATEWAY_HEAP_GROWTH_PERCENT: value })).toThrow(/GATEWAY_HEAP_GROWTH_PERCENT/);
    }
  });
});
