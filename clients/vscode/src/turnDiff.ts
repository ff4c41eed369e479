// "N files changed" after a turn: the file as it was before the turn, rebuilt from the turn's
// unified diff (`shiro.turnDiff`) and the file as it is now, so VS Code's diff editor can show
// before | now. Pure (the `diff` library only); controller.ts opens the editor.

import { applyPatch, parsePatch, reversePatch } from 'diff';

const strip = (name: string | undefined) => (name ?? '').replace(/^[ab]\//, '').replace(/\t.*$/, '');

/** The text `path` had before the turn, or null when the diff does not apply to `now` any more
 * (a later turn or the user changed those lines; the caller then shows the diff itself). */
export function textBefore(diff: string, path: string, now: string): string | null {
  let patches;
  try {
    patches = parsePatch(diff);
  } catch {
    return null;
  }
  const patch = patches.find((p) => strip(p.newFileName) === path || strip(p.oldFileName) === path);
  if (!patch || !patch.hunks.length) return null;
  const before = applyPatch(now, reversePatch(patch));
  return before === false ? null : before;
}

/** Unified-diff lines as the approval card shows them: the `---`/`+++` header left out (the card
 * names the file), at most `max` lines, then a line saying how many more there are. */
export function diffLinesForCard(diff: string, max = 400): string[] {
  const all = diff.replace(/\n$/, '').split('\n');
  // Only the header before the first hunk goes: a removed line "-- x" reads "--- x" in a hunk.
  const first = all.findIndex((l) => l.startsWith('@@'));
  const lines = first < 0 ? all : all.slice(first);
  if (lines.length <= max) return lines;
  return [...lines.slice(0, max), `… ${lines.length - max} more lines (Show diff shows them all)`];
}

/** "+12 −3" of a unified diff (its hunks' added and removed lines). */
export function diffStats(diff: string): string {
  let added = 0;
  let removed = 0;
  let inHunk = false;
  for (const line of diff.split('\n')) {
    if (line.startsWith('@@')) inHunk = true;
    else if (inHunk && line.startsWith('+')) added += 1;
    else if (inHunk && line.startsWith('-')) removed += 1;
  }
  return `+${added} −${removed}`;
}
