import { describe, expect, it } from '@jest/globals';
import { configProblems } from '../../../test/support/config-problems.js';
import { env, parseEnv } from '../src/config.js';

const shape = {
  Oidc__Realm: env.string(),
  Oidc__ServerUrl: env.url(['http', 'https']),
  Cache__Port: env.port(7777),
  Feature__Enabled: env.bool(false),
  Keys: env.list(),
};


describe('parseEnv', () => {
  it('should report a missing and an invalid variable together, one line each', () => {
    const problems = configProblems(() =>
      parseEnv(shape, { Oidc__ServerUrl: 'not a url', Cache__Port: '70000', Keys: 'a' }),
    );
    expect(problems).toEqual([
      'Oidc__Realm: is required',
      'Oidc__ServerUrl: must be a URL with scheme http or https',
      expect.stringMatching(/^Cache__Port: .*65535/),
    ]);
  });

  it('should name every problem in the error message', () => {
    expect(() => parseEnv(shape, {})).toThrow(/Oidc__Realm: is required[\s\S]*Keys: is required/);
  });

  it('should apply defaults and coerce types', () => {
    const config = parseEnv(shape, {
      Oidc__Realm: 'platform',
      Oidc__ServerUrl: 'https://id.example.com',
      Feature__Enabled: 'true',
      Keys: ' k1, ,k2 ',
    });
    expect(config).toEqual({
      Oidc__Realm: 'platform',
      Oidc__ServerUrl: 'https://id.example.com',
      Cache__Port: 7777,
      Feature__Enabled: true,
      Keys: ['k1', 'k2'],
    });
  });

  it('should treat an empty value as unset', () => {
    expect(configProblems(() => parseEnv({ A: env.string() }, { A: '  ' }))).toEqual(['A: is required']);
  });

  it('should reject a boolean that is not one', () => {
    expect(configProblems(() => parseEnv({ B: env.bool(false) }, { B: 'maybe' }))).toEqual(['B: must be true or false']);
  });
});

describe('parseEnv cross checks', () => {
  it('should report a conditional requirement together with the other problems', () => {
    const problems = configProblems(() =>
      parseEnv({ Backend: env.string(), Url: env.string().optional(), Port: env.port() }, { Backend: 'redis', Port: 'x' }, (input) =>
        input.Backend === 'redis' && input.Url === undefined ? ['Url: is required when Backend is redis'] : [],
      ),
    );
    expect(problems).toEqual([expect.stringMatching(/^Port: /), 'Url: is required when Backend is redis']);
  });
});
