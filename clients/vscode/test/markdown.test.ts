import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JSDOM } from 'jsdom';
import { blocks, renderBlocksHtml, renderMarkdown, sanitize, SECTION_BLOCKS, setWindow, splitCommitted, StreamingMarkdown } from '../webview/markdown';

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

/** The bench's kind of answer: headings, paragraphs, code and lists, many blocks. */
function longAnswer(steps: number): string {
  let out = '';
  for (let n = 1; n <= steps; n++) {
    out += `### Step ${n}\n\nThe handler for page ${n} returns \`paginate(items, page=${n})\`.\n\n`;
    out += `\`\`\`python\ndef page_${n}(items):\n    return items[${n} * 10:]\n\`\`\`\n\n- checked ${n}\n- next ${n + 1}\n\n`;
  }
  return out + '```ts\nconst open = "fence at the very end";\n';
}

const blockHtml = (view: StreamingMarkdown) => [...view.el.querySelectorAll('.md-block')].map((c) => c.innerHTML).join('');

test('incremental: with every frame over budget, the final DOM equals a full render', () => {
  const r = rng(11);
  const text = longAnswer(60);
  const full = doc.createElement('div');
  full.innerHTML = renderBlocksHtml(text);
  for (let round = 0; round < 5; round++) {
    const view = new StreamingMarkdown(doc);
    let at = 0;
    let calls = 0;
    while (at < text.length) {
      at += 1 + Math.floor(r() * 400);
      // A deadline already past: each call commits one block at most and may leave the rest.
      view.set(text.slice(0, at), -Infinity);
      calls += 1;
    }
    while (!view.set(text, -Infinity, true)) calls += 1;
    assert.equal(view.behind, 0);
    assert.equal(blockHtml(view), full.innerHTML, `round ${round}`);
    assert.equal(view.el.textContent, full.textContent, `round ${round}`);
    assert.ok(calls > 60, 'the budget made it take many calls');
  }
});

test('incremental: finished blocks are grouped in sections and never rebuilt', () => {
  const text = longAnswer(30);
  const view = new StreamingMarkdown(doc);
  view.set(text.slice(0, text.length / 2));
  const firstSection = view.el.querySelector('.md-section')!;
  const firstBlock = firstSection.firstElementChild;
  view.set(text);
  const sections = view.el.querySelectorAll('.md-section');
  assert.ok(sections.length > 1, 'more than one section');
  for (const s of sections) assert.ok(s.children.length <= SECTION_BLOCKS);
  assert.equal(view.el.querySelector('.md-section'), firstSection);
  assert.equal(firstSection.firstElementChild, firstBlock);
  assert.equal(view.el.lastElementChild!.classList.contains('md-tail'), true);
});

test('incremental: an open fence grows in place, as plain text, then renders like a full render', () => {
  const view = new StreamingMarkdown(doc);
  view.set('intro\n\n```python\ndef f():\n');
  const code = view.el.querySelector('.md-tail pre > code.language-python')!;
  const node = code.firstChild;
  assert.equal(code.textContent, 'def f():\n');
  view.set('intro\n\n```python\ndef f():\n    return "<b>x</b>"\n');
  assert.equal(view.el.querySelector('.md-tail pre > code')!.firstChild, node, 'the same text node, appended to');
  assert.equal(code.textContent, 'def f():\n    return "<b>x</b>"\n');
  assert.equal(view.el.querySelector('.md-tail b'), null, 'code text is never parsed as HTML');
  assert.ok(!view.el.innerHTML.includes('hljs-'));
  // The answer ends inside the fence: the final render highlights it, as a one-shot render does.
  const text = 'intro\n\n```python\ndef f():\n    return "<b>x</b>"\n';
  view.set(text, Infinity, true);
  assert.equal(blockHtml(view), renderBlocksHtml(text));
  assert.ok(view.el.innerHTML.includes('hljs-keyword'));
});

test('incremental: a text that is not an append of the last one renders from scratch', () => {
  const view = new StreamingMarkdown(doc);
  view.set('one\n\ntwo\n\n```js\nlet a');
  view.set('uno\n\ndos\n\n');
  assert.equal(blockHtml(view), renderBlocksHtml('uno\n\ndos\n\n'));
  view.set('uno\n\ndos\n\ntres');
  assert.equal(blockHtml(view), renderBlocksHtml('uno\n\ndos\n\ntres'));
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
