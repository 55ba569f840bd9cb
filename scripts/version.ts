/**
 * The platform's version (scripts/release/versions.ts; docs/releasing.md):
 *   npx tsx scripts/version.ts            prints it (the root package.json's `version`)
 *   npx tsx scripts/version.ts --check    fails naming every copy that differs (`make lint`)
 *   npx tsx scripts/version.ts set X.Y.Z  writes it into package.json and every copy
 */
import { fileURLToPath } from 'node:url';
import { platformVersionOf, setVersion, versionProblems } from './release/versions.js';

const root = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const [command, value] = process.argv.slice(2);
if (command === 'set' && value !== undefined) {
  setVersion(root, value);
} else if (command === '--check') {
  const problems = versionProblems(root);
  for (const line of problems) console.error(line);
  process.exitCode = problems.length > 0 ? 1 : 0;
} else if (command === undefined) {
  console.log(platformVersionOf(root));
} else {
  console.error('usage: npx tsx scripts/version.ts [--check | set X.Y.Z]');
  process.exitCode = 2;
}
