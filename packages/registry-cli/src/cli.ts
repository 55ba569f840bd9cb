#!/usr/bin/env node
// graph-registry: the registry's public HTTP API for CI pipelines (see config.ts for the usage,
// exit-status.ts for what each exit status means).
import { commandOf } from './commands.ts';
import { loadCliConfig, USAGE, UsageError } from './config.ts';
import { EXIT } from './exit-status.ts';
import { createRegistryClient, oneLine, RegistryError } from './registry-client.ts';

const output = { out: (text: string) => process.stdout.write(`${text}\n`), err: (text: string) => process.stderr.write(`${text}\n`) };

// A reader that stops early (`graph-registry graph list | head -1`) closes the pipe: that ends the
// command quietly, not with an unhandled EPIPE and its stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.done);
  process.stderr.write(`graph-registry: cannot write the output: ${oneLine(err.message)}\n`);
  process.exit(EXIT.internal);
});

async function main(argv: readonly string[]): Promise<number> {
  try {
    const config = loadCliConfig(argv);
    return await commandOf(config)(createRegistryClient(config.url, config.key, config.timeoutMs), config, output);
  } catch (err) {
    if (err instanceof UsageError) {
      if (err.message === '') {
        output.out(USAGE);
        return EXIT.done;
      }
      output.err(`graph-registry: ${err.message}\n\n${USAGE}`);
      return EXIT.usage;
    }
    if (err instanceof RegistryError) {
      output.err(`graph-registry: ${err.message}`);
      return err.exitStatus;
    }
    output.err(`graph-registry: internal error: ${oneLine(err instanceof Error ? err.message : String(err))}`);
    return EXIT.internal;
  }
}

process.exitCode = await main(process.argv.slice(2));
