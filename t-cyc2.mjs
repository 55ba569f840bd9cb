import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
const project = new ESLint({ cwd: process.cwd() });
const config = await project.calculateConfigForFile('services/webhooks/src/app.ts');
const eslint = new ESLint({ cwd: process.cwd(), overrideConfigFile: true, overrideConfig: [{ ignores: ['**/generated/**'] }, { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, plugins: { 'import-x': config.plugins['import-x'] }, settings: config.settings, rules: { 'import-x/no-cycle': config.rules['import-x/no-cycle'] } }] });
const results = await eslint.lintFiles(['services/*/src/**/*.ts', 'packages/*/src/**/*.ts']);
for (const r of results) if (r.messages.length) console.log(r.filePath, r.messages.map((m) => `${m.line}: ${m.message}`));
console.log(results.length, 'files');
