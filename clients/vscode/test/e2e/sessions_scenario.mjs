// Issue 40's VS Code end to end for sessions: the Sessions view (short ids), a search over the
// sessions' text from its title bar (the server's full-text search as the user types), the match
// resumed into the panel, then Rename, Export as Markdown and Delete from a session's context menu
// (tests/clients/test_vscode_sessions.py writes the sessions and checks the files). Run by drive.mjs
// (`scenario: "sessions"`) with its helpers.

/** @param {any} h drive.mjs's helpers: page, config, out, step, shot, openPanel, palette, T */
export async function sessionsScenario(h) {
  const { page, config, out, step, shot, T } = h;
  const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: /^sessions/i }) }).first();
  const labels = () => pane.locator('.monaco-list-row').evaluateAll((r) => r.map((x) => x.innerText.replace(/\s+/g, ' ').trim()));
  const quickRows = () => page.$$eval('.quick-input-widget .monaco-list-row', (r) => r.map((x) => x.innerText.replace(/\s+/g, ' ').trim()));

  // Each row's text as drawn: the characters inside every clipping box around them, less the
  // room of the "…" a cut box draws at its end. innerText holds the clipped characters too.
  const visibleTexts = () => pane.locator('.monaco-list-row').evaluateAll((rows) => rows.map((row) => {
    const walker = document.createTreeWalker(row, NodeFilter.SHOW_TEXT);
    let shown = '';
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      let right = Infinity;
      for (let el = node.parentElement; el && el !== row.parentElement; el = el.parentElement) {
        if (getComputedStyle(el).overflowX === 'visible') continue;
        const cut = el.scrollWidth > el.clientWidth ? 16 : 0;
        right = Math.min(right, el.getBoundingClientRect().right - cut);
      }
      const range = document.createRange();
      for (let i = 0; i < node.length; i++) {
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const box = range.getBoundingClientRect();
        if (box.width > 0 && box.right <= right + 0.5) shown += node.data[i];
        else if (/\s/.test(node.data[i])) shown += ' ';
      }
      shown += ' ';
    }
    return shown.replace(/\s+/g, ' ').trim();
  }));

  async function menu(rowText, action) {
    await pane.locator('.monaco-list-row', { hasText: rowText }).first().click({ button: 'right' });
    const item = page.locator('.context-view .action-item .action-label', { hasText: action }).first();
    await item.waitFor({ timeout: T });
    out.menus ??= {};
    out.menus[rowText] = await page.$$eval('.context-view .action-item .action-label', (a) => a.map((x) => x.innerText.trim()).filter(Boolean));
    await item.hover();
    await item.click();
    // A click that lands while the menu is still settling only highlights the item: Enter runs it.
    await page.waitForTimeout(300);
    if (await page.locator('.context-view .monaco-menu').isVisible()) await page.keyboard.press('Enter');
    step(`${action} on "${rowText}"`);
  }

  await h.workbench();
  const frame = await h.openPanel();
  // The Sessions section starts collapsed under Chat and Tasks: open it.
  const header = page.locator('.pane-header', { hasText: /^sessions/i }).first();
  await header.waitFor({ timeout: T });
  if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
  await page.waitForFunction((n) => {
    const p = [...document.querySelectorAll('.pane')].find((x) => /^sessions/i.test(x.querySelector('.pane-header')?.innerText ?? ''));
    return p && p.querySelectorAll('.monaco-list-row').length >= n;
  }, config.titles.length, { timeout: T });
  out.listed = await labels();
  out.listedVisible = await visibleTexts();
  await shot('01-sessions-view', 'the Sessions view: newest first, each led by its short id, with its age');

  // Search from the view's title bar: a word of an answer, never a title.
  await pane.hover();
  await pane.locator('.actions .action-label[aria-label^="Search Sessions"]').first().click();
  const box = page.locator('.quick-input-widget input');
  await box.waitFor({ timeout: T });
  await box.fill(config.query);
  await page.waitForFunction((w) => document.querySelector('.quick-input-widget')?.innerText.toLowerCase().includes(w), config.query, { timeout: T });
  out.found = await quickRows();
  await shot('02-search', 'searching the sessions\' text: the match with the passage that holds the word');
  await box.press('Enter');
  await frame.waitForFunction((x) => document.querySelector('#rows')?.innerText.includes(x), config.foundAnswer, { timeout: T });
  out.resumedRows = await frame.evaluate(() => [...document.querySelectorAll('#rows .row')].map((r) => r.innerText));
  step('resumed the match');

  // Rename from the context menu.
  await menu(config.renameFrom, 'Rename');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: T });
  await input.fill(config.renameTo);
  await input.press('Enter');
  await pane.locator('.monaco-list-row', { hasText: config.renameTo }).first().waitFor({ timeout: T });
  out.afterRename = await labels();
  await shot('03-renamed', 'a session renamed from its context menu');

  // Export: an untitled Markdown document.
  await menu(config.renameTo, 'Export as Markdown');
  await page.waitForFunction((t) => document.querySelector('.part.editor .monaco-editor .view-lines')?.innerText.replace(/\u00a0/g, ' ').includes(t), config.renameTo, { timeout: T });
  out.exported = await page.$eval('.part.editor .monaco-editor .view-lines', (e) => e.innerText.replace(/\u00a0/g, ' '));
  out.exportTab = await page.$eval('.tabs-container .tab.active', (t) => t.innerText);
  await shot('04-exported', 'Export as Markdown opens the session as an untitled Markdown document');

  // Delete, after the modal question.
  await menu(config.deleteTitle, 'Delete');
  const button = page.locator('.monaco-dialog-box .monaco-button', { hasText: /^Delete$/ }).first();
  await button.waitFor({ timeout: T });
  out.question = await page.$eval('.monaco-dialog-box', (d) => d.innerText);
  await shot('05-delete-question', 'Delete asks first and says what goes');
  await button.click();
  await page.waitForFunction((t) => {
    const p = [...document.querySelectorAll('.pane')].find((x) => /^sessions/i.test(x.querySelector('.pane-header')?.innerText ?? ''));
    return p && ![...p.querySelectorAll('.monaco-list-row')].some((r) => r.innerText.includes(t));
  }, config.deleteTitle, { timeout: T });
  out.afterDelete = await labels();
  await shot('06-deleted', 'the session is gone from the view');
}
