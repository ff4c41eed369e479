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

/** DOMPurify bound to a window (the webview's, or jsdom's in tests). */
export function setWindow(win: Window & typeof globalThis): void {
  purifier = DOMPurify(win);
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
        link.textContent = `image: ${node.getAttribute('alt') || src}`;
        node.replaceWith(link);
      }
    }
  });
}

export function sanitize(html: string): string {
  if (!purifier) setWindow(window as Window & typeof globalThis);
  return purifier!.sanitize(html, {
    FORBID_ATTR: ['style'],
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed'],
    ALLOWED_URI_REGEXP: SAFE_URI,
  }) as unknown as string;
}

export function renderMarkdown(text: string, highlight = true): string {
  highlighting = highlight;
  try {
    return sanitize(md.render(text));
  } finally {
    highlighting = true;
  }
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

/**
 * A streaming Markdown view: each committed block is rendered once and appended; the open tail
 * is re-rendered on each `update` (plain, unhighlighted, while a fence is open).
 */
export class StreamingMarkdown {
  readonly el: HTMLElement;
  private tail: HTMLElement;
  private text = '';
  private done = 0;

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

  /** Set the whole text (it normally only grows; anything else renders again from scratch). */
  set(text: string): void {
    if (!text.startsWith(this.text.slice(0, this.done))) {
      for (const child of [...this.el.children]) if (child !== this.tail) child.remove();
      this.done = 0;
    }
    this.text = text;
    // Commit every complete block, one element each, each rendered once.
    const limit = splitCommitted(text, this.done).committed;
    while (this.done < limit) {
      const cut = firstBoundary(text, this.done, limit);
      const block = this.el.ownerDocument.createElement('div');
      block.className = 'md-block';
      block.innerHTML = renderMarkdown(text.slice(this.done, cut));
      this.decorate(block);
      this.el.insertBefore(block, this.tail);
      this.done = cut;
    }
    const rest = text.slice(this.done);
    if (!rest) {
      this.tail.replaceChildren();
      return;
    }
    const open = splitCommitted(rest).openFence;
    this.tail.innerHTML = renderMarkdown(rest, !open);
    if (!open) this.decorate(this.tail);
  }

  append(s: string): void {
    this.set(this.text + s);
  }
}

/** One-shot rendering of a finished text, block by block, as streaming would have left it. */
export function renderBlocksHtml(text: string): string {
  return blocks(text).map((b) => renderMarkdown(b)).join('');
}
