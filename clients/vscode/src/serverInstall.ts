// One-click set-up (issue 25): when no `shiro-lsp` is found, the extension creates a virtualenv in
// its global storage with the system Python and installs the server's wheel that the .vsix carries
// (`dist/server/*.whl`, built by scripts/package-vsix.sh); pip takes the dependencies from the
// user's own package index (pip's configuration, untouched). It never installs shiro-neko itself
// from an index by name: nobody holds that name there, so anyone could publish a package under it
// (issue 35). A build without the wheel says how to point `shiro.server.path` at an install
// instead. The plan is pure and unit-tested; `runInstall` runs it with progress.

import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

export interface InstallStep {
  title: string;
  command: string;
  args: string[];
}

/** The interpreters tried, in order, for the virtualenv (the Python extension's first). */
export function pythonCandidates(platform: NodeJS.Platform, interpreter?: string): string[] {
  const system = platform === 'win32' ? ['py', 'python', 'python3'] : ['python3', 'python'];
  return interpreter ? [interpreter, ...system] : system;
}

/** Run with a candidate: exits 0 when it is a Python the server runs on (3.11 or newer, with venv). */
// `-P` (3.11+, which the check asks for anyway; an older Python fails it): the extension host's
// working directory may be a workspace, and `-c`/`-m` would put it first on the import path, so a
// repository's `venv.py` or `pip/` would run (issue 35).
export const PYTHON_CHECK = ['-P', '-c', 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 11) else 3)'];

export function venvPython(venv: string, platform: NodeJS.Platform): string {
  return platform === 'win32' ? path.win32.join(venv, 'Scripts', 'python.exe') : path.posix.join(venv, 'bin', 'python');
}

/** The wheel the .vsix carries, if any (a development build has none: nothing is installed then). */
export function bundledWheel(dir: string, list: (d: string) => string[] = (d) => fs.readdirSync(d)): string | undefined {
  try {
    const wheels = list(dir).filter((f) => /^shiro_neko-.*\.whl$/.test(f)).sort();
    return wheels.length ? path.join(dir, wheels[wheels.length - 1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Why a build without the wheel installs nothing, and what the user does instead. */
export const NO_WHEEL =
  'this build of the extension carries no shiro-neko wheel, and shiro-neko is never installed from a package index by name ' +
  '(anyone could publish a package under that name). Install shiro-neko from its source (`pipx install <path to the ' +
  'checkout>` or `pip install <path>` in a virtualenv), then set `shiro.server.path` to its `shiro-lsp`.';

/** A path to a wheel file, never a name pip would look up on an index. */
export function isWheelPath(wheel: string): boolean {
  return /\.whl$/.test(wheel) && (path.posix.isAbsolute(wheel) || path.win32.isAbsolute(wheel));
}

export function installSteps(python: string, venv: string, wheel: string | undefined, platform: NodeJS.Platform): InstallStep[] {
  if (!wheel || !isWheelPath(wheel)) throw new Error(NO_WHEEL);
  const py = venvPython(venv, platform);
  return [
    // --clear: a half-made virtualenv of an earlier, failed attempt is started again from scratch.
    { title: 'Creating a virtualenv', command: python, args: ['-P', '-m', 'venv', '--clear', venv] },
    {
      title: 'Installing shiro-neko and its dependencies',
      command: py,
      args: ['-P', '-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', wheel],
    },
  ];
}

export interface RunOptions {
  log: (line: string) => void;
  progress: (title: string, increment: number) => void;
  env?: NodeJS.ProcessEnv;
}

function run(command: string, args: string[], o: RunOptions, timeoutMs = 15 * 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    o.log(`$ ${command} ${args.join(' ')}`);
    const child = execFile(command, args, { env: o.env ?? process.env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (stdout) o.log(stdout.trimEnd());
      if (stderr) o.log(stderr.trimEnd());
      if (err) reject(new Error(`${path.basename(command)} ${args.slice(0, 2).join(' ')} failed: ${(stderr || err.message).trim().split('\n').slice(-3).join(' ')}`));
      else resolve();
    });
    child.stdin?.end();
  });
}

/** The first candidate that is a usable Python, or undefined. */
export async function findPython(candidates: string[], o: RunOptions): Promise<string | undefined> {
  for (const c of candidates) {
    try {
      await run(c, PYTHON_CHECK, { ...o, log: () => undefined }, 30_000);
      return c;
    } catch {
      o.log(`${c}: not a Python 3.11 or newer with venv`);
    }
  }
  return undefined;
}

/** Creates the virtualenv and installs the server; resolves with the `shiro-lsp` it made. */
export async function runInstall(python: string, venv: string, wheel: string | undefined, platform: NodeJS.Platform, o: RunOptions): Promise<string> {
  const steps = installSteps(python, venv, wheel, platform); // throws NO_WHEEL before anything is made
  fs.mkdirSync(path.dirname(venv), { recursive: true });
  for (const step of steps) {
    o.progress(step.title, 100 / (steps.length + 1));
    await run(step.command, step.args, o);
  }
  const exe = platform === 'win32' ? path.win32.join(venv, 'Scripts', 'shiro-lsp.exe') : path.posix.join(venv, 'bin', 'shiro-lsp');
  if (!fs.existsSync(exe)) throw new Error(`the install finished but ${exe} is missing`);
  return exe;
}
