import { ConfigError } from '@sp/core';

/** The problems a configuration loader reports (ConfigError); fails the test when it accepts the configuration. */
export function configProblems(load: () => unknown): readonly string[] {
  try {
    load();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('the configuration was accepted');
}
