// The `shiro` settings the extension hands the server (docs/protocol.md "Workspace trust"). A
// repository's own `.vscode/settings.json` is not the user: VS Code's Restricted Mode keeps the
// keys package.json lists under `restrictedConfigurations` at the user's value until VS Code
// trusts the folder, and even then MCP servers defined at workspace level are not the user's own
// settings: they travel apart, as `workspaceMcpServers`, and the server runs them only after its
// own trust step (the same as for `.mcp.json`). Pure: tested without VS Code (test/pure.test.ts).

/** What `WorkspaceConfiguration.inspect` reports for one key. */
export interface Inspected<T> {
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

type Servers = Record<string, unknown>;

function objectOr(value: unknown): Servers {
  return value && typeof value === 'object' && !Array.isArray(value) ? { ...(value as Servers) } : {};
}

/**
 * `section`: the merged `shiro` section as VS Code reports it; `mcp`: `inspect('mcpServers')`;
 * `trusted`: `workspace.isTrusted`. Returns a plain object for initializationOptions,
 * workspace/configuration and didChangeConfiguration.
 */
export function serverSettings(section: unknown, mcp: Inspected<unknown> | undefined, trusted: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = JSON.parse(JSON.stringify(section ?? {}));
  delete out.server; // `shiro.server.path` is the extension's (which executable to start), not the server's
  out.mcpServers = objectOr(mcp?.globalValue); // the user's own servers
  // Workspace-level servers: project servers, and none at all while VS Code does not trust the folder.
  out.workspaceMcpServers = trusted ? { ...objectOr(mcp?.workspaceValue), ...objectOr(mcp?.workspaceFolderValue) } : {};
  return out;
}
