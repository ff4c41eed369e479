// Issue 38's VS Code end to end (tests/clients/test_vscode_editor.py owns the fake provider and the
// assertions): the editor context chip, a prompt whose scripted edit makes VS Code's own TypeScript
// server report a type error (the next request to the provider holds it), the lightbulb's shiro
// actions on that error, and "Edit with shiro-neko…" shown in the diff editor and accepted.
// Run by drive.mjs (`scenario: "editor"`) with its helpers.

/** @param {any} h drive.mjs's helpers: page, config, out, step, shot, workbench, openPanel, palette, send, T */
export async function editorScenario(h) {
  const { page, config, out, step, shot, T } = h;
  const quickInput = page.locator('.quick-input-widget input');
  const editorLines = page.locator('.editor-instance .monaco-editor .view-lines').first();
  const chipText = (frame) => frame.evaluate(() => document.querySelector('#chips .context-chip')?.textContent ?? null);

  await h.workbench();
  const frame = await h.openPanel();

  // Open app.ts and select its first three lines: the chip says what the next prompt sends.
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+P');
  await quickInput.waitFor({ timeout: T });
  await quickInput.fill(config.file);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: config.file }).first().click();
  await page.locator('.editor-instance .monaco-editor .view-lines', { hasText: 'greet' }).first().waitFor({ timeout: T });
  step('opened the file');
  await editorLines.click();
  await page.keyboard.press('Control+Home');
  for (let i = 0; i < 3; i++) await page.keyboard.press('Shift+ArrowDown');
  await frame.waitForFunction((want) => document.querySelector('#chips .context-chip')?.textContent?.includes(want),
    config.chip, { timeout: T });
  out.chip = await chipText(frame);
  await shot('editor-01-context-chip', 'lines 1-3 selected: the panel shows "Using app.ts:1-3" above the input');

  // One click removes it (the same selection stays without one); another selection brings one back.
  await frame.locator('#chips .context-chip .chip-remove').click();
  await frame.waitForFunction(() => !document.querySelector('#chips .context-chip'), null, { timeout: T });
  out.chipAfterRemove = await chipText(frame);
  await editorLines.click();
  await page.keyboard.press('Control+Home');
  for (let i = 0; i < 2; i++) await page.keyboard.press('Shift+ArrowDown');
  await frame.waitForFunction((want) => document.querySelector('#chips .context-chip')?.textContent?.includes(want),
    config.chipAgain, { timeout: T });
  out.chipAgain = await chipText(frame);
  step('chip back after another selection');

  // The prompt: its scripted edit introduces a type error that VS Code's TypeScript server reports.
  await h.send(frame, config.prompt);
  await frame.waitForFunction((x) => document.querySelector('#rows')?.innerText.includes(x), config.editDone, { timeout: T });
  // The squiggle is on screen.
  await page.locator('.editor-instance .squiggly-error').first().waitFor({ timeout: T });
  out.problems = await page.evaluate(() => document.querySelector('.part.statusbar')?.innerText ?? '');
  await shot('editor-02-type-error', 'after the edit: the TypeScript error the next request told the model about');

  // The lightbulb on that error: shiro's actions, "Fix with shiro-neko" among them.
  await editorLines.click();
  await page.keyboard.press('Control+Home');
  await page.keyboard.press('F8'); // to the error (the peek shows it), then back to the editor
  await page.waitForTimeout(300);
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+.');
  const menu = page.locator('.action-widget');
  await menu.locator('.monaco-list-row', { hasText: 'Fix with shiro-neko' }).first().waitFor({ timeout: T });
  out.lightbulb = await menu.evaluate((m) => [...m.querySelectorAll('.monaco-list-row')].map((r) => r.innerText.trim()));
  await shot('editor-03-lightbulb', 'the quick fix menu on the type error: Ask / Fix / Explain / Edit with shiro-neko');

  // "Edit with shiro-neko…": the instruction, the proposal in the diff editor, Accept.
  // The action widget focuses the row under the pointer; Enter runs it (a click waits on its overlay).
  await menu.locator('.monaco-list-row', { hasText: 'Edit with shiro-neko' }).first().hover({ force: true });
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Edit with shiro-neko' }).waitFor({ timeout: T });
  await quickInput.fill(config.instruction);
  await quickInput.press('Enter');
  step('instruction sent');
  const toast = page.locator('.notification-toast', { hasText: "Apply shiro-neko's edit" }).first();
  await toast.waitFor({ timeout: T });
  await page.locator('.tabs-container .tab', { hasText: 'Edit with shiro-neko' }).first().waitFor({ timeout: T });
  out.diffTabs = await page.$$eval('.tabs-container .tab', (tabs) => tabs.map((t) => t.getAttribute('aria-label') ?? t.textContent));
  out.diffLines = await page.evaluate(() => [...document.querySelectorAll('.monaco-diff-editor .editor.modified .view-line')]
    .map((l) => l.textContent));
  // The panel shows the instruction as the turn's question, before the turn's answer.
  await frame.waitForFunction((x) => [...document.querySelectorAll('#rows .row.user')].some((r) => r.innerText.includes(x)),
    config.instruction, { timeout: T });
  out.rowsAfterEdit = await frame.evaluate(() => [...document.querySelectorAll('#rows .row')]
    .map((r) => ({ kind: [...r.classList].find((c) => c !== 'row') ?? '', text: r.innerText })));
  await shot('editor-04-inline-diff', 'the inline edit in VS Code\'s diff editor with Accept / Reject');
  await toast.locator('.monaco-button', { hasText: 'Accept' }).click();
  await page.waitForFunction(() => ![...document.querySelectorAll('.tabs-container .tab')]
    .some((t) => (t.getAttribute('aria-label') ?? '').includes('Edit with shiro-neko')), null, { timeout: T });
  await page.locator('.editor-instance .monaco-editor .view-lines', { hasText: config.fixedText }).first().waitFor({ timeout: T });
  // The type error is gone with the accepted edit.
  await page.waitForFunction(() => !document.querySelector('.editor-instance .squiggly-error'), null, { timeout: T });
  await shot('editor-05-accepted', 'accepted: the line is replaced in the buffer (undo works), the error gone');
  step('accepted');
}
