// Generates src/protocol.ts from docs/protocol.schema.json (itself generated from
// server/protocol.py) with json-schema-to-typescript. `--check` exits 1 when the committed file
// is stale, which tests/clients/test_vscode_unit.py runs.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile } from 'json-schema-to-typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const schemaPath = process.env.SHIRO_PROTOCOL_SCHEMA ?? join(root, '..', '..', 'docs', 'protocol.schema.json');
const outPath = join(root, 'src', 'protocol.ts');
const check = process.argv.includes('--check');

const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
const ts = await compile(schema, 'ShiroNekoProtocol', {
  bannerComment:
    '// Generated from docs/protocol.schema.json by scripts/gen-protocol.mjs (json-schema-to-typescript); do not edit.\n' +
    '// Run `npm run gen:protocol` after the server\'s protocol changes.',
  additionalProperties: false,
  unreachableDefinitions: true,
  style: { singleQuote: true, printWidth: 120 },
});
if (check) {
  const current = existsSync(outPath) ? readFileSync(outPath, 'utf8') : '';
  if (current !== ts) {
    console.error('src/protocol.ts is stale: run `npm run gen:protocol` in clients/vscode');
    process.exit(1);
  }
  console.log('src/protocol.ts is up to date');
} else {
  writeFileSync(outPath, ts);
  console.log(`wrote ${outPath}`);
}
