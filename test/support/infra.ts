import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The address file written by test/infra/*.sh when they start the local dependencies. */
export const infraEnvFile = fileURLToPath(new URL('../../.cache/run/infra.env', import.meta.url));

function readInfraEnv(): Record<string, string> {
  let text = '';
  try {
    text = readFileSync(infraEnvFile, 'utf8');
  } catch {
    return {};
  }
  const entries = text
    .split('\n')
    .map((line) => line.match(/^([A-Z0-9_]+)=(.*)$/))
    .filter((match): match is RegExpMatchArray => match !== null)
    .map((match) => [match[1]!, match[2]!] as const);
  return Object.fromEntries(entries);
}

/**
 * The address of a running local dependency (REDIS_URL, KAFKA_BROKERS, KEYCLOAK_URL, ...).
 * The process environment wins over the file, so a developer can point tests elsewhere.
 */
export function infra(name: string): string {
  if (process.env['SP_TEST_TIER'] === 'unit') {
    throw new Error(`${name}: a unit test uses no dependency; rename this file from *.unit.test.ts to *.test.ts (the integration tier)`);
  }
  const value = process.env[name] ?? readInfraEnv()[name];
  if (value === undefined || value === '') {
    throw new Error(`${name} is not set: start the local dependencies first (make test does; or bash test/infra/infra.sh up)`);
  }
  return value;
}
