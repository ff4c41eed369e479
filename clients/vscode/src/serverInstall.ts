// One-click set-up (issue 25): when no `shiro-lsp` is found, the extension creates a virtualenv in
// its global storage with the system Python and installs the server's wheel that the .vsix carries
// (`dist/server/*.whl`, built by scripts/package-vsix.sh); pip takes the dependencies from the
// user's own package index (pip's configuration, untouched). The plan is pure and unit-tested;
// `runInstall` runs it with progress.

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
export const PYTHON_CHECK = ['-c', 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 11) else 3)'];

export function venvPython(venv: string, platform: NodeJS.Platform): string {
  return platform === 'win32' ? path.win32.join(venv, 'Scripts', 'python.exe') : path.posix.join(venv, 'bin', 'python');
}

/** The wheel the .vsix carries, if any (a development build has none: pip then asks the index). */
export function bundledWheel(dir: string, list: (d: string) => string[] = (d) => fs.readdirSync(d)): string | undefined {
  try {
    const wheels = list(dir).filter((f) => /^shiro_neko-.*\.whl$/.test(f)).sort();
    return wheels.length ? path.join(dir, wheels[wheels.length - 1]) : undefined;
  } catch {
    return undefined;
  }
}

export function installSteps(python: string, venv: string, wheel: string | undefined, platform: NodeJS.Platform): InstallStep[] {
  const py = venvPython(venv, platform);
  return [
    // --clear: a half-made virtualenv of an earlier, failed attempt is started again from scratch.
    { title: 'Creating a virtualenv', command: python, args: ['-m', 'venv', '--clear', venv] },
    {
      title: 'Installing shiro-neko and its dependencies',
      command: py,
      args: ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', wheel ?? 'shiro-neko'],
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
  fs.mkdirSync(path.dirname(venv), { recursive: true });
  const steps = installSteps(python, venv, wheel, platform);
  for (const step of steps) {
    o.progress(step.title, 100 / (steps.length + 1));
    await run(step.command, step.args, o);
  }
  const exe = platform === 'win32' ? path.win32.join(venv, 'Scripts', 'shiro-lsp.exe') : path.posix.join(venv, 'bin', 'shiro-lsp');
  if (!fs.existsSync(exe)) throw new Error(`the install finished but ${exe} is missing`);
  return exe;
}
