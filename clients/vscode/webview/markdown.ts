// Markdown for the panel: markdown-it (raw HTML off) + highlight.js (classes only, so no inline
// styles under the CSP) + DOMPurify on every HTML string. Streaming renders the committed prefix
// (complete blocks) once and re-renders only the open tail, so rows only ever grow.

import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import lua from 'highlight.js/lib/languages/lua';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import MarkdownIt from 'markdown-it';

const LANGUAGES = { bash, css, diff, go, java, javascript, json, lua, markdown, python, rust, shell, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, lang);
hljs.registerAliases(['sh', 'zsh', 'console'], { languageName: 'bash' });
hljs.registerAliases(['js', 'jsx', 'mjs'], { languageName: 'javascript' });
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });
hljs.registerAliases(['rs'], { languageName: 'rust' });

let highlighting = true;

const md = new MarkdownIt({
  html: false,
  linkify: true,
  breaks: false,
  highlight(code: string, lang: string): string {
    if (!highlighting) return '';
    const language = lang && hljs.getLanguage(lang) ? lang : undefined;
    try {
      return language ? hljs.highlight(code, { language, ignoreIllegals: true }).value : '';
    } catch {
      return '';
    }
  },
});

const SAFE_URI = /^(?:(?:https?|mailto):|[^a-z]|[a-z+.-]+(?:[^a-z+.\-:]|$))/i;

let purifier: ReturnType<typeof DOMPurify> | undefined;

/**
 * DOMPurify bound to a window (the webview's, or jsdom's in tests), configured once (`setConfig`):
 * streaming sanitises every frame, and a config passed per call is parsed again on every call.
 */
export function setWindow(win: Window & typeof globalThis): void {
  purifier = DOMPurify(win);
  purifier.setConfig({
    FORBID_ATTR: ['style'],
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed'],
    ALLOWED_URI_REGEXP: SAFE_URI,
  });
  purifier.addHook('afterSanitizeAttributes', (node: Element) => {
    if (node.tagName === 'A') {
      node.setAttribute('rel', 'noopener noreferrer');
    }
    if (node.tagName === 'IMG') {
      // Remote images are blocked by the CSP anyway; show a link instead of a broken image.
      const src = node.getAttribute('src') ?? '';
      if (!src.startsWith('data:image/')) {
        const link = node.ownerDocument.createElement('a');
        link.setAttribute('href', src);
        link.setAttribute('rel', 'noopener noreferrer');
        link.textContent = `image: ${node.getAttribute('alt') || src}`;
        node.replaceWith(link);
      }
    }
  });
}

/**
 * DOMPurify's string API: it parses in a document of its own (nothing there loads or runs) and
 * the result is parsed again by `innerHTML`. Measured in Chromium, this beats sanitising in place
 * in a reused inert document, where adopting the nodes into the page costs more than parsing.
 */
export function sanitize(html: string): string {
  if (!purifier) setWindow(window as Window & typeof globalThis);
  return purifier!.sanitize(html) as unknown as string;
}

function renderHtml(text: string, highlight: boolean): string {
  highlighting = highlight;
  try {
    return md.render(text);
  } finally {
    highlighting = true;
  }
}

export function renderMarkdown(text: string, highlight = true): string {
  return sanitize(renderHtml(text, highlight));
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

export interface Split {
  /** End of the committed prefix: complete blocks that no later text can change. */
  committed: number;
  /** The tail sits inside a code fence that has not closed yet. */
  openFence: boolean;
}

function closesFence(line: string, m: RegExpExecArray | null, fence: string): boolean {
  return !!m && m[1][0] === fence[0] && m[1].length >= fence.length && line.trim() === m[1];
}

/**
 * Where the committed prefix of a streaming text ends: after the last blank line outside a code
 * fence, or after a closing fence line. Only whole lines (ending in a newline) count. `from` must
 * itself be a committed point (no fence is open there).
 */
export function splitCommitted(text: string, from = 0): Split {
  let committed = from;
  let fence: string | null = null;
  let pos = from;
  for (let nl = text.indexOf('\n', pos); nl >= 0; nl = text.indexOf('\n', pos)) {
    const line = text.slice(pos, nl);
    const m = FENCE.exec(line);
    if (fence) {
      if (closesFence(line, m, fence)) {
        fence = null;
        committed = nl + 1;
      }
    } else if (m) {
      fence = m[1];
    } else if (line.trim() === '') {
      committed = nl + 1;
    }
    pos = nl + 1;
  }
  return { committed, openFence: fence !== null };
}

/** The first committed point after `from` (at most `limit`). */
function firstBoundary(text: string, from: number, limit: number): number {
  let fence: string | null = null;
  let pos = from;
  for (let nl = text.indexOf('\n', pos); nl >= 0 && nl < limit; nl = text.indexOf('\n', pos)) {
    const line = text.slice(pos, nl);
    const m = FENCE.exec(line);
    if (fence) {
      if (closesFence(line, m, fence)) return nl + 1;
    } else if (m) {
      fence = m[1];
    } else if (line.trim() === '') {
      return nl + 1;
    }
    pos = nl + 1;
  }
  return limit;
}

/** The blocks a text is rendered as: the same cut points streaming arrives at, then the tail. */
export function blocks(text: string): string[] {
  const out: string[] = [];
  const { committed } = splitCommitted(text);
  let pos = 0;
  while (pos < committed) {
    const cut = firstBoundary(text, pos, committed);
    out.push(text.slice(pos, cut));
    pos = cut;
  }
  if (pos < text.length) out.push(text.slice(pos));
  return out;
}

/** Finished blocks are grouped this many to a section: each section is skipped by layout and paint
 * while it is off screen (`content-visibility: auto` in panel.css), so a frame costs the blocks it
 * adds, not the length of the message. */
export const SECTION_BLOCKS = 24;

/** While the tail is an open fence longer than this that cannot grow in place, it is re-rendered
 * at most every TAIL_THROTTLE_MS. */
const BIG_TAIL = 4000;
const TAIL_THROTTLE_MS = 120;

const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());

/** An open code fence shown as it grows: its text node is appended to, never re-parsed. */
interface OpenFence {
  from: number;
  shown: number;
  text: Text;
}

/** A tail that is only an open fence, its opening line unindented: where its code starts. */
function fenceBody(rest: string): { body: number; lang: string } | null {
  const nl = rest.indexOf('\n');
  const m = nl < 0 ? null : /^(`{3,}|~{3,})([^\n]*)$/.exec(rest.slice(0, nl));
  if (!m || (m[1][0] === '`' && m[2].includes('`'))) return null;
  return { body: nl + 1, lang: m[2].trim().split(/\s+/)[0] };
}

/**
 * A streaming Markdown view. Each frame renders only what is new: the complete blocks that
 * arrived (markdown-it per block, highlighted once), appended to the current section, and the
 * open tail, re-rendered, both in one DOMPurify pass; a tail that is an open code fence grows as
 * plain text in place. With a `deadline`, `set` stops committing blocks once it has passed and
 * returns false: the caller calls it again next frame, so a burst of text never makes a long frame.
 */
export class StreamingMarkdown {
  readonly el: HTMLElement;
  private tail: HTMLElement;
  private section: HTMLElement | null = null;
  private sectionBlocks = 0;
  private text = '';
  /** End of the committed (rendered, final) blocks. */
  private done = 0;
  /** Where the tail's current content starts (-1: the tail is empty). */
  private tailFrom = -1;
  private tailAt = -Infinity;
  private fence: OpenFence | null = null;
  private caughtUp = true;

  constructor(doc: Document, private decorate: (block: HTMLElement) => void = () => {}) {
    this.el = doc.createElement('div');
    this.el.className = 'md';
    this.tail = doc.createElement('div');
    this.tail.className = 'md-block md-tail';
    this.el.appendChild(this.tail);
  }

  get value(): string {
    return this.text;
  }

  /** Characters of the text not shown yet (0: caught up, the last `set` showed all of it). */
  get behind(): number {
    return this.caughtUp ? 0 : this.text.length - this.done;
  }

  /**
   * Set the whole text (it normally only grows; anything else renders again from scratch).
   * `final`: the text is complete, so an open fence at its end is rendered (and highlighted) as
   * a one-shot render would. Returns false when it has not shown all of the text yet.
   */
  set(text: string, deadline = Infinity, final = false): boolean {
    if (!text.startsWith(this.text)) {
      // Not a pure append: keep the committed blocks if their text still stands.
      if (text.length < this.done || !text.startsWith(this.text.slice(0, this.done))) this.clear();
      else this.clearTail();
    }
    this.text = text;
    const limit = splitCommitted(text, this.done).committed;
    let html = '';
    let end = this.done;
    while (end < limit) {
      const cut = firstBoundary(text, end, limit);
      html += `<div class="md-block">${md.render(text.slice(end, cut))}</div>`;
      end = cut;
      if (now() > deadline) break;
    }
    const moved = end !== this.tailFrom;
    let tail: 'render' | 'plain' | 'fence' | 'keep' | 'clear' = 'keep';
    let caughtUp = end >= limit;
    const rest = caughtUp ? text.slice(end) : '';
    if (!caughtUp) {
      // The tail may show text that is now in a block: drop it until we have caught up.
      if (moved) tail = 'clear';
    } else if (!rest) {
      tail = 'clear';
    } else if (final || !splitCommitted(rest).openFence) {
      tail = 'render';
    } else if (fenceBody(rest)) {
      tail = 'fence';
    } else if (rest.length > BIG_TAIL && !moved && now() - this.tailAt < TAIL_THROTTLE_MS) {
      caughtUp = false; // shown next frame
    } else {
      tail = 'plain';
    }
    if (tail === 'render' || tail === 'plain') {
      html += `<div class="md-block md-tail">${renderHtml(rest, tail === 'render')}</div>`;
    }
    if (html) this.insert(html, tail === 'render');
    this.done = end;
    if (tail === 'clear') this.clearTail();
    else if (tail === 'fence') this.growFence(rest);
    else if (tail !== 'keep') {
      this.fence = null;
      this.tailFrom = end;
      this.tailAt = now();
    }
    return (this.caughtUp = caughtUp);
  }

  append(s: string): void {
    this.set(this.text + s);
  }

  /** Sanitises the frame's new HTML once; the blocks go to sections, a rendered tail to the tail. */
  private insert(html: string, decorateTail: boolean): void {
    const doc = this.el.ownerDocument;
    const box = doc.createElement('div');
    box.innerHTML = sanitize(html);
    const last = box.lastElementChild;
    if (last?.classList.contains('md-tail')) {
      last.remove();
      this.tail.replaceChildren(...last.childNodes);
      if (decorateTail) this.decorate(this.tail);
    }
    this.decorate(box);
    for (const block of [...box.children]) {
      if (!this.section || this.sectionBlocks >= SECTION_BLOCKS) {
        this.section = doc.createElement('div');
        this.section.className = 'md-section';
        this.el.insertBefore(this.section, this.tail);
        this.sectionBlocks = 0;
      }
      this.section.appendChild(block);
      this.sectionBlocks += 1;
    }
  }

  private clear(): void {
    for (const child of [...this.el.children]) if (child !== this.tail) child.remove();
    this.section = null;
    this.sectionBlocks = 0;
    this.done = 0;
    this.clearTail();
  }

  private clearTail(): void {
    this.tail.replaceChildren();
    this.tailFrom = -1;
    this.fence = null;
  }

  /** The tail is an open fence: shown as markdown-it shows it unhighlighted, growing in place. */
  private growFence(rest: string): void {
    const { body, lang } = fenceBody(rest)!;
    const code = rest.length - body;
    if (this.fence && this.fence.from === this.done && this.tailFrom === this.done) {
      this.fence.text.appendData(rest.slice(body + this.fence.shown));
      this.fence.shown = code;
      return;
    }
    const doc = this.el.ownerDocument;
    const pre = doc.createElement('pre');
    const el = doc.createElement('code');
    if (lang) el.className = `language-${lang}`;
    const text = doc.createTextNode(rest.slice(body));
    el.appendChild(text);
    pre.appendChild(el);
    this.tail.replaceChildren(pre);
    this.fence = { from: this.done, shown: code, text };
    this.tailFrom = this.done;
    this.tailAt = now();
  }
}

/** One-shot rendering of a finished text, block by block, as streaming would have left it. */
export function renderBlocksHtml(text: string): string {
  return blocks(text).map((b) => renderMarkdown(b)).join('');
}
