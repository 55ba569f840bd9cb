/**
 * `make docs` (`npx tsx scripts/docs.ts`): rewrites the generated sections of the documentation,
 * the settings tables from each service's `src/config.ts` and the chart values tables from each
 * chart's values.yaml. `--check` (run by `make lint`) changes nothing and fails when a section is
 * out of date, a setting has no description, a chart value no `@param`, the documentation names a
 * setting that no service declares, a link does not resolve, or an alert and its runbook section do
 * not match (docs/runbooks.md).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brokenLinks } from './docs/links.js';
import { repositoryRunbookProblems } from './docs/runbooks.js';
import { generate, outOfDate } from './docs/targets.js';

const root = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const check = process.argv.includes('--check');
const { files, problems } = await generate(root);
const stale = outOfDate(files);
if (!check) for (const file of stale) writeFileSync(join(root, file), files.get(file)!.after);
const report = [...problems, ...brokenLinks(root), ...repositoryRunbookProblems(root), ...(check ? stale.map((file) => `${file}: generated sections are out of date: run \`make docs\``) : [])];
for (const line of report) console.error(line);
if (!check && stale.length > 0) console.log(`rewrote ${stale.join(', ')}`);
process.exitCode = report.length > 0 ? 1 : 0;
