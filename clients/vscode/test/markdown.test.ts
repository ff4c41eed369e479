import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JSDOM } from 'jsdom';
import { blocks, renderBlocksHtml, renderMarkdown, sanitize, setWindow, splitCommitted, StreamingMarkdown } from '../webview/markdown';

const dom = new JSDOM('<!DOCTYPE html><body></body>');
setWindow(dom.window as unknown as Window & typeof globalThis);
const doc = dom.window.document;

test('the committed prefix ends after a blank line or a closed fence, never inside a fence', () => {
  assert.equal(splitCommitted('para one\n\npara tw').committed, 10);
  assert.equal(splitCommitted('```py\nx = 1\n\ny').committed, 0);
  assert.equal(splitCommitted('```py\nx = 1\n\ny').openFence, true);
  assert.equal(splitCommitted('```py\nx\n```\nafter').committed, 12);
  assert.equal(splitCommitted('no newline yet').committed, 0);
  assert.deepEqual(blocks('a\n\nb\n\n```\nc\n\nd\n```\ne'), ['a\n\n', 'b\n\n', '```\nc\n\nd\n```\n', 'e']);
});

const SAMPLES = [
  '# Title\n\nSome *text* with `code`.\n\n```python\ndef f():\n\n    return 1\n```\n\n- a\n- b\n\n1. one\n2. two\n\n> quote\n\nend',
  'Para with [link](https://example.com) and ~~~\n~~~js\nlet x = 1;\n~~~\ntrailing **bold** text\n\n| a | b |\n| - | - |\n| 1 | 2 |\n',
  '````md\n```\ninner\n```\n````\n\nafter the fence\n',
];

function rng(seed: number): () => number {
  return () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

test('property: any split into deltas renders like the finished text in one shot', () => {
  const r = rng(7);
  for (const text of SAMPLES) {
    const oneShot = renderBlocksHtml(text);
    for (let round = 0; round < 40; round++) {
      const view = new StreamingMarkdown(doc);
      let at = 0;
      while (at < text.length) {
        const n = 1 + Math.floor(r() * 12);
        view.append(text.slice(at, at + n));
        at += n;
      }
      const streamed = [...view.el.querySelectorAll('.md-block')].map((c) => c.innerHTML).join('');
      assert.equal(streamed, oneShot, `round ${round}`);
    }
  }
});

test('committed blocks are rendered once: earlier elements are kept while the tail grows', () => {
  const view = new StreamingMarkdown(doc);
  view.append('first para\n\n');
  const first = view.el.firstElementChild;
  view.append('second');
  view.append(' para grows');
  assert.equal(view.el.firstElementChild, first);
  assert.equal(view.el.children.length, 2);
});

test('an open fence is shown plain until it closes, then highlighted', () => {
  const view = new StreamingMarkdown(doc);
  view.append('```python\ndef f(): return "x"\n');
  assert.ok(!view.el.innerHTML.includes('hljs-'));
  view.append('```\n');
  assert.ok(view.el.innerHTML.includes('hljs-keyword'));
});

test('sanitiser: an XSS corpus comes out inert', () => {
  const corpus = [
    '<img src=x onerror=alert(1)>',
    '<script>alert(1)</script>',
    '[click](javascript:alert(1))',
    '[data](data:text/html;base64,PHNjcmlwdD4=)',
    '<a href="javascript:alert(1)">x</a>',
    '![img](https://evil.example/x.png)',
    '<svg onload=alert(1)>',
    '<iframe src="https://evil.example"></iframe>',
    '[cmd](command:workbench.action.terminal.new)',
  ];
  for (const md of corpus) {
    const html = renderMarkdown(md);
    const box = doc.createElement('div');
    box.innerHTML = html;
    assert.equal(box.querySelectorAll('script, img, iframe, svg, object, embed').length, 0, `${md} -> ${html}`);
    for (const el of box.querySelectorAll('*')) {
      for (const attr of el.getAttributeNames()) assert.ok(!attr.startsWith('on') && attr !== 'style', `${md} -> ${html}`);
      const href = el.getAttribute('href');
      if (href !== null) assert.match(href, /^(https?:|mailto:|#|[^:]*$)/i, `${md} -> ${html}`);
    }
  }
  const raw = sanitize('<p style="color:red" onclick="x()">hi</p><style>p{}</style><a href="https://ok.example">ok</a>');
  assert.doesNotMatch(raw, /style|onclick/);
  assert.match(raw, /href="https:\/\/ok.example"/);
});
