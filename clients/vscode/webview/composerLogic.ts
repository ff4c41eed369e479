// The composer's pure parts: prompt history walking, the `@` and `/` tokens, IME guard.

import type { SlashCommand } from '../src/shared/messages';

/** Up/Down through `shiro.history`; Down past the newest restores the draft. */
export class HistoryWalk {
  private index: number; // prompts.length = the draft
  private draft = '';

  constructor(private prompts: string[] = []) {
    this.index = prompts.length;
  }

  setPrompts(prompts: string[]): void {
    this.prompts = prompts;
    this.index = prompts.length;
  }

  get walking(): boolean {
    return this.index < this.prompts.length;
  }

  up(current: string): string | null {
    if (this.index === 0 || !this.prompts.length) return null;
    if (this.index === this.prompts.length) this.draft = current;
    this.index -= 1;
    return this.prompts[this.index];
  }

  down(): string | null {
    if (this.index >= this.prompts.length) return null;
    this.index += 1;
    return this.index === this.prompts.length ? this.draft : this.prompts[this.index];
  }

  reset(): void {
    this.index = this.prompts.length;
    this.draft = '';
  }
}

export interface Token {
  start: number;
  end: number;
  query: string;
}

/** The `@path` token the caret is in, if any. */
export function mentionToken(text: string, caret: number): Token | null {
  const before = text.slice(0, caret);
  const m = /(^|\s)@([^\s@]*)$/.exec(before);
  if (!m) return null;
  const start = caret - m[2].length - 1;
  const after = /^[^\s]*/.exec(text.slice(caret))![0];
  return { start, end: caret + after.length, query: m[2] };
}

/** The `/command` token at the start of the input, while the caret is still in it. */
export function slashToken(text: string, caret: number): Token | null {
  const m = /^\/([\w-]*)$/.exec(text.slice(0, caret));
  return m ? { start: 0, end: caret, query: m[1] } : null;
}

export function filterSlash(commands: SlashCommand[], query: string): SlashCommand[] {
  const q = query.toLowerCase();
  return commands.filter((c) => c.name.startsWith(q)).concat(commands.filter((c) => !c.name.startsWith(q) && c.name.includes(q)));
}

/** The Enter that confirms an IME composition must not send. */
export function isImeEnter(e: { isComposing?: boolean; keyCode?: number }): boolean {
  return !!e.isComposing || e.keyCode === 229;
}

/** Whether Up/Down should walk history: the caret is on the first/last line. */
export function onFirstLine(text: string, caret: number): boolean {
  return !text.slice(0, caret).includes('\n');
}

export function onLastLine(text: string, caret: number): boolean {
  return !text.slice(caret).includes('\n');
}
