#!/usr/bin/env node
// graph-registry: the registry's public HTTP API for CI pipelines (see config.ts for the usage).
import { commandOf } from './commands.ts';
import { loadCliConfig, USAGE, UsageError } from './config.ts';
import { createRegistryClient, RegistryError } from './registry-client.ts';

const output = { out: (text: string) => process.stdout.write(`${text}\n`), err: (text: string) => process.stderr.write(`${text}\n`) };

async function main(argv: readonly string[]): Promise<number> {
  try {
    const config = loadCliConfig(argv);
    return await commandOf(config)(createRegistryClient(config.url, config.key), config, output);
  } catch (err) {
    if (err instanceof UsageError) {
      if (err.message === '') {
        output.out(USAGE);
        return 0;
      }
      output.err(`graph-registry: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof RegistryError) {
      output.err(`graph-registry: ${err.message}`);
      return 2;
    }
    throw err;
  }
}

process.exitCode = await main(process.argv.slice(2));
