// Where the language server is, in this order: the `shiro.server.path` setting (scope `machine`:
// a workspace cannot set it); `shiro-lsp` in a workspace folder's `.venv` once VS Code trusts the
// folder (a cloned repository could ship that file: it is code the user never chose to run); next
// to the Python extension's selected interpreter; on PATH; in `~/.local/bin` (pip --user) and
// pipx's venv; and last the virtualenv this extension installs into its global storage
// (serverInstall.ts). Pure apart from the `exists` probe it is given.

import * as path from 'path';

export interface ServerLookup {
  setting: string | undefined;
  folders: string[];
  pathEnv: string | undefined;
  platform: NodeJS.Platform;
  exists: (file: string) => boolean;
  /** The Python extension's selected interpreter (its `python` executable), if any. */
  interpreter?: string;
  /** The user's home directory (for `~/.local/bin` and pipx). */
  home?: string;
  /** `$PIPX_HOME`, else pipx's default under the home directory. */
  pipxHome?: string;
  /** The extension's own virtualenv (global storage). */
  installed?: string;
  /** `workspace.isTrusted`: without it a workspace's own `.venv` is never run. */
  trusted?: boolean;
}

export type ServerSource = 'setting' | 'venv' | 'interpreter' | 'path' | 'user' | 'pipx' | 'installed';
export type ServerFound = { command: string; source: ServerSource };

export const MISSING =
  'shiro-neko could not find its language server (shiro-lsp). Choose "Install shiro-neko" to set it ' +
  'up in a virtualenv of its own, install it yourself (`pip install shiro-neko` or `pipx install shiro-neko`), ' +
  'or set shiro.server.path.';

export function serverCandidates(l: ServerLookup): { file: string; source: ServerSource }[] {
  const win = l.platform === 'win32';
  const p = win ? path.win32 : path.posix;
  const exe = win ? 'shiro-lsp.exe' : 'shiro-lsp';
  const bin = win ? 'Scripts' : 'bin';
  const out: { file: string; source: ServerSource }[] = [];
  // A workspace's own .venv only once VS Code trusts the folder (workspace.isTrusted).
  for (const folder of l.trusted === false ? [] : l.folders) out.push({ file: p.join(folder, '.venv', bin, exe), source: 'venv' });
  if (l.interpreter) out.push({ file: p.join(p.dirname(l.interpreter), exe), source: 'interpreter' });
  for (const dir of (l.pathEnv ?? '').split(win ? ';' : ':').filter(Boolean)) out.push({ file: p.join(dir, exe), source: 'path' });
  if (l.home && !win) out.push({ file: p.join(l.home, '.local', 'bin', exe), source: 'user' });
  const pipx = l.pipxHome ?? (l.home ? p.join(l.home, win ? 'pipx' : '.local/pipx') : undefined);
  if (pipx) out.push({ file: p.join(pipx, 'venvs', 'shiro-neko', bin, exe), source: 'pipx' });
  if (l.installed) out.push({ file: p.join(l.installed, bin, exe), source: 'installed' });
  return out;
}

export function findServer(l: ServerLookup): ServerFound | { missing: string; canInstall: boolean } {
  const setting = l.setting?.trim();
  if (setting) {
    return l.exists(setting)
      ? { command: setting, source: 'setting' }
      : { missing: `shiro.server.path is set to ${setting}, which does not exist.`, canInstall: false };
  }
  for (const c of serverCandidates(l)) if (l.exists(c.file)) return { command: c.file, source: c.source };
  return { missing: MISSING, canInstall: true };
}
