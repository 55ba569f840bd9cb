/** A clock for code that takes `now: () => number`, which the test moves instead of sleeping. */
export interface TestClock {
  now: () => number;
  /** Moves the clock forward. */
  advance(ms: number): void;
}

/** Stands still until the test moves it: lifetimes and expiry tested with no sleep at all. Starts at the wall clock's time unless told. */
export function manualClock(start = Date.now()): TestClock {
  let at = start;
  return {
    now: () => at,
    advance(ms) {
      at += ms;
    },
  };
}

/**
 * Runs with the wall clock, ahead of it by what the test advanced: for a service that also talks
 * to real dependencies in real time (a session past its token's life without waiting that long).
 */
export function runningClock(): TestClock {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    advance(ms) {
      offset += ms;
    },
  };
}
