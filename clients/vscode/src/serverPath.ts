// Where the language server is: the `shiro.server.path` setting (scope `machine`: a workspace
// cannot set it), else `shiro-lsp` in a workspace folder's `.venv` once VS Code trusts the folder
// (a cloned repository could ship that file: it is code the user never chose to run), else on PATH.
// Pure apart from the `exists` probe it is given.

import * as path from 'path';

export interface ServerLookup {
  setting: string | undefined;
  folders: string[];
  pathEnv: string | undefined;
  platform: NodeJS.Platform;
  exists: (file: string) => boolean;
  /** `workspace.isTrusted`: without it a workspace's own `.venv` is never run. */
  trusted?: boolean;
}

export type ServerFound = { command: string; source: 'setting' | 'venv' | 'path' };

export function findServer(l: ServerLookup): ServerFound | { missing: string } {
  const exe = l.platform === 'win32' ? 'shiro-lsp.exe' : 'shiro-lsp';
  const bin = l.platform === 'win32' ? 'Scripts' : 'bin';
  const setting = l.setting?.trim();
  if (setting) {
    return l.exists(setting)
      ? { command: setting, source: 'setting' }
      : { missing: `shiro.server.path is set to ${setting}, which does not exist.` };
  }
  for (const folder of l.trusted === false ? [] : l.folders) {
    const candidate = path.join(folder, '.venv', bin, exe);
    if (l.exists(candidate)) return { command: candidate, source: 'venv' };
  }
  const sep = l.platform === 'win32' ? ';' : ':';
  for (const dir of (l.pathEnv ?? '').split(sep).filter(Boolean)) {
    const candidate = path.join(dir, exe);
    if (l.exists(candidate)) return { command: candidate, source: 'path' };
  }
  return {
    missing:
      'shiro-neko could not find its language server (shiro-lsp). Install it with ' +
      '`pip install shiro-neko` (or in the workspace .venv), or set shiro.server.path.',
  };
}
