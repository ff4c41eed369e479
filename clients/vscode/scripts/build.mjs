// Bundles the extension host (node, cjs) and the webview (browser, iife) with esbuild, copies the
// codicon font next to the webview, and with --tests bundles test/*.test.ts for `node --test`.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const production = process.argv.includes('--production');
const tests = process.argv.includes('--tests');
const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'warning', absWorkingDir: root };

await build({
  ...common,
  entryPoints: ['src/extension.ts'],
  outfile: 'dist/extension.js',
  platform: 'node',
  format: 'cjs',
  target: 'node18',
  external: ['vscode'],
});
await build({
  ...common,
  entryPoints: { panel: 'webview/main.ts' },
  outdir: 'dist/webview',
  platform: 'browser',
  format: 'iife',
  target: 'chrome114',
});
mkdirSync(join(root, 'dist/webview'), { recursive: true });
copyFileSync(join(root, 'webview/panel.css'), join(root, 'dist/webview/panel.css'));
for (const f of ['codicon.css', 'codicon.ttf']) {
  copyFileSync(join(root, 'node_modules/@vscode/codicons/dist', f), join(root, 'dist/webview', f));
}

if (tests) {
  rmSync(join(root, 'dist-test'), { recursive: true, force: true });
  const entries = readdirSync(join(root, 'test')).filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`);
  await build({
    ...common,
    entryPoints: entries,
    outdir: 'dist-test',
    outExtension: { '.js': '.cjs' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // Host modules that import vscode are tested through their pure parts only.
    external: ['vscode', 'jsdom'],
  });
}
