// What an approval card shows: for an edit "+12 −3" and the first hunk (the `diff` library's
// structuredPatch), for a command its command line apart from the words. Pure.

import { structuredPatch } from 'diff';

export interface EditSummary {
  stats: string;
  hunk: string[];
}

export function editSummary(path: string, before: string, after: string, maxLines = 40): EditSummary {
  const patch = structuredPatch(path, path, before, after, '', '', { context: 2 });
  let added = 0;
  let removed = 0;
  for (const h of patch.hunks) {
    for (const line of h.lines) {
      if (line.startsWith('+')) added += 1;
      else if (line.startsWith('-')) removed += 1;
    }
  }
  const first = patch.hunks[0];
  const hunk = first
    ? [`@@ -${first.oldStart},${first.oldLines} +${first.newStart},${first.newLines} @@`, ...first.lines.slice(0, maxLines)]
    : [];
  if (first && first.lines.length > maxLines) hunk.push(`… ${first.lines.length - maxLines} more lines`);
  return { stats: `+${added} −${removed}`, hunk };
}

/** run_command's title is "<label>: <command>" (server/agent/tools/shell.py); the card shows the
 * label as words and the command as code. Taken from the title, not the raw input: the server has
 * made the title's control and bidi characters visible (server/agent/tool_calls.py). */
export function splitCommand(toolName: string, title: string): { title: string; command?: string } {
  const at = title.indexOf(': ');
  if (toolName !== 'run_command' || at < 0) return { title };
  return { title: title.slice(0, at), command: title.slice(at + 2) };
}
