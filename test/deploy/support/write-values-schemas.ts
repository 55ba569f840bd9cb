// Regenerates every chart's values.schema.json from its values.yaml:
//   node test/deploy/support/write-values-schemas.ts
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { expectedSchemas, formatSchema } from './values-schema.ts';

for (const { file, schema } of expectedSchemas()) {
  writeFileSync(file, formatSchema(schema));
  process.stdout.write(`wrote ${relative(process.cwd(), file)}\n`);
}
