import { withDeadline } from '@sp/core';

/** A dependency the service cannot serve without; `check` rejects when it is not usable. */
export interface ReadinessCheck {
  name: string;
  check: () => Promise<void>;
}

export interface ReadinessReport {
  ready: boolean;
  /** `ok`, or the reason the check failed. */
  checks: Record<string, string>;
  failing: string[];
}

/** Runs every check concurrently, each bounded by a timeout, so a hung dependency cannot hang the probe. */
export async function runReadinessChecks(checks: readonly ReadinessCheck[], timeoutMs = 2000): Promise<ReadinessReport> {
  const outcomes = await Promise.all(
    checks.map(async ({ name, check }) => {
      try {
        await withDeadline(Promise.resolve().then(check), timeoutMs);
        return [name, 'ok'] as const;
      } catch (err) {
        return [name, err instanceof Error ? err.message : String(err)] as const;
      }
    }),
  );
  const failing = outcomes.filter(([, result]) => result !== 'ok').map(([name]) => name);
  return { ready: failing.length === 0, checks: Object.fromEntries(outcomes), failing };
}
