// `shiro/diagnostics` and `shiro/navigate` answered with VS Code's own language features (issue 38;
// docs/protocol.md "Editor context and intelligence"): the problems every extension's language
// server reports (`languages.getDiagnostics`) and the definition, reference, symbol and hover
// providers (`vscode.execute*Provider`). The server asks these after an edit and for its
// diagnostics / find_definition / find_references / workspace_symbols tools.

import * as vscode from 'vscode';
import type * as P from './protocol';

/** Diagnostics per file and locations sent at most; the server caps again (server/lsp/editor_requests.py). */
const MAX_PER_FILE = 200;
const MAX_FILES = 500;
const MAX_LOCATIONS = 200;
/** Files whose publications are counted at most (a workspace's worth; past it the count restarts). */
const MAX_COUNTED = 20_000;

/** How many times each file's diagnostics were (re)published: `FileDiagnostics.generation`, so the
 * server knows the language servers looked at an edit even when they found nothing new. */
const generations = new Map<string, number>();

export function countDiagnostics(): vscode.Disposable {
  return vscode.languages.onDidChangeDiagnostics((e) => {
    if (generations.size > MAX_COUNTED) generations.clear();
    for (const uri of e.uris) generations.set(uri.toString(), (generations.get(uri.toString()) ?? 0) + 1);
  });
}

function range(r: vscode.Range): P.LspRange {
  return { start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } };
}

function diagnostic(d: vscode.Diagnostic): P.LspDiagnostic {
  const out: P.LspDiagnostic = { range: range(d.range), message: d.message, severity: d.severity + 1 };
  const code = typeof d.code === 'object' && d.code !== null ? d.code.value : d.code;
  if (code !== undefined) out.code = code;
  if (d.source) out.source = d.source;
  return out;
}

export function diagnostics(params: P.DiagnosticsParams): P.DiagnosticsResult {
  const items: P.FileDiagnostics[] = [];
  const wanted = params.uris?.map((u) => vscode.Uri.parse(u));
  const pairs: [vscode.Uri, readonly vscode.Diagnostic[]][] = wanted
    ? wanted.map((uri) => [uri, vscode.languages.getDiagnostics(uri)])
    : vscode.languages.getDiagnostics();
  for (const [uri, found] of pairs.slice(0, MAX_FILES)) {
    // Asked by URI, answered with the server's spelling, so it matches what it asked for.
    const asked = params.uris?.find((u) => vscode.Uri.parse(u).toString() === uri.toString());
    if (found.length || asked) {
      items.push({
        uri: asked ?? uri.toString(),
        diagnostics: found.slice(0, MAX_PER_FILE).map(diagnostic),
        generation: generations.get(uri.toString()) ?? 0,
      });
    }
  }
  return { items };
}

function location(l: vscode.Location | vscode.LocationLink): P.LspLocation {
  return 'targetUri' in l
    ? { uri: l.targetUri.toString(), range: range(l.targetSelectionRange ?? l.targetRange) }
    : { uri: l.uri.toString(), range: range(l.range) };
}

function hoverText(hovers: vscode.Hover[]): string {
  const parts: string[] = [];
  for (const hover of hovers) {
    for (const c of hover.contents) {
      parts.push(typeof c === 'string' ? c : 'value' in c ? c.value : String(c));
    }
  }
  return parts.join('\n\n');
}

export async function navigate(params: P.NavigateParams): Promise<P.NavigateResult> {
  if (params.kind === 'symbols') {
    const found = (await vscode.commands.executeCommand<vscode.SymbolInformation[]>(
      'vscode.executeWorkspaceSymbolProvider', params.query ?? '')) ?? [];
    return {
      symbols: found.slice(0, MAX_LOCATIONS).map((s) => ({
        name: s.name, kind: s.kind + 1, location: location(s.location), containerName: s.containerName || undefined,
      })),
    };
  }
  if (!params.uri || !params.position) throw new Error(`shiro/navigate ${params.kind} needs a uri and a position`);
  const uri = vscode.Uri.parse(params.uri);
  const position = new vscode.Position(params.position.line, params.position.character);
  if (params.kind === 'hover') {
    const hovers = (await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', uri, position)) ?? [];
    return { hover: hoverText(hovers) };
  }
  const command = params.kind === 'definition' ? 'vscode.executeDefinitionProvider' : 'vscode.executeReferenceProvider';
  const found = (await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[]>(command, uri, position)) ?? [];
  return { locations: found.slice(0, MAX_LOCATIONS).map(location) };
}
