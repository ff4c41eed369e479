// The one-click install (src/serverInstall.ts) against issue 35: it never installs shiro-neko from
// a package index by name.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { findPython, installSteps, NO_WHEEL, runInstall } from '../src/serverInstall';

test('without the bundled wheel nothing is installed from the package index by name (issue 35)', async () => {
  // Nobody holds the name `shiro-neko` on the index: `pip install shiro-neko` would run whatever anyone published.
  for (const wheel of [undefined, '', 'shiro-neko', 'shiro_neko-0.1.0-py3-none-any.whl', 'shiro-neko==0.1.0']) {
    assert.throws(() => installSteps('python3', '/gs/v', wheel, 'linux'), (err: Error) => err.message === NO_WHEEL, String(wheel));
  }
  assert.match(NO_WHEEL, /shiro\.server\.path/);
  // The run stops before it makes the virtualenv or runs anything.
  const ran: string[] = [];
  const venv = join(tmpdir(), `shiro-no-wheel-${process.pid}`, 'v');
  await assert.rejects(runInstall('python3', venv, undefined, 'linux',
    { log: (l) => ran.push(l), progress: () => undefined }), (err: Error) => err.message === NO_WHEEL);
  assert.deepEqual(ran, []);
  assert.ok(!existsSync(dirname(venv)));
});

test('the Python check runs nothing of the working directory (a workspace) (issue 35)', async () => {
  // `python -c`/`-m` put the working directory first on the import path: a repository's `venv.py` ran.
  const dir = mkdtempSync(join(tmpdir(), 'shiro-planted-'));
  const marker = join(dir, 'ran');
  writeFileSync(join(dir, 'venv.py'), `open(${JSON.stringify(marker)}, 'w').close()\n`);
  const before = process.cwd();
  process.chdir(dir);
  try {
    assert.equal(await findPython(['python3'], { log: () => undefined, progress: () => undefined }), 'python3');
  } finally {
    process.chdir(before);
  }
  assert.ok(!existsSync(marker), 'the planted venv.py ran');
});
