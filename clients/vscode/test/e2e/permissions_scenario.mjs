// Issue 39's VS Code end to end, permission rules (tests/clients/test_vscode_permissions.py owns
// the fake provider and the assertions): "Always allow" on a command's card asks where the rule is
// kept, "In this folder" writes it; `/permissions` lists it and removes it. Run by drive.mjs
// (`scenario: "permissions"`) with its helpers.

/** @param {any} h drive.mjs's helpers: page, config, out, step, shot, openPanel, send, T */
export async function permissionsScenario(h) {
  const { page, config, out, step, shot, T } = h;
  const quickRows = () => page.$$eval('.quick-input-widget .monaco-list-row', (rows) => rows.map((r) => r.getAttribute('aria-label') ?? r.innerText));
  const quickTitle = () => page.$eval('.quick-input-widget .quick-input-title', (t) => t.textContent ?? '').catch(() => '');

  await h.workbench();
  const frame = await h.openPanel();
  out.sidebarWidth = await page.$eval('.part.sidebar', (b) => b.offsetWidth);
  await h.send(frame, config.prompt);
  await frame.waitForSelector('#rows .tool.asking', { timeout: T });
  out.askCard = await frame.$eval('#rows .tool.asking', (c) => c.innerText);
  await frame.locator('#rows .tool.asking button', { hasText: 'Always allow' }).first().click();
  await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Always allow' }).waitFor({ timeout: T });
  out.scopeTitle = await quickTitle();
  out.scopeRows = await quickRows();
  await shot('01-always-allow-where', '"Always allow" on a command: where its rule is kept (this session, this folder, everywhere)');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'In this folder' }).first().click();
  step('picked In this folder');
  await frame.waitForFunction((t) => document.querySelector('#rows')?.innerText.includes(t), config.answer, { timeout: T });
  await frame.waitForFunction(() => document.querySelector('#busy')?.hidden === true, null, { timeout: T });
  out.rowsAfter = await frame.$$eval('#rows .row', (rows) => rows.map((r) => r.innerText));
  await shot('02-rule-kept', 'the turn went on; a notice names the rule kept for this folder');

  await h.send(frame, '/permissions');
  await page.locator('.quick-input-widget .quick-input-title', { hasText: 'permission rules' }).waitFor({ timeout: T });
  await page.waitForSelector('.quick-input-widget .monaco-list-row', { timeout: T });
  out.ruleRows = await quickRows();
  await shot('03-permissions-list', '/permissions: the rules with their list and where each is kept');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: config.rule }).first().click();
  const remove = page.locator('.monaco-dialog-box .monaco-button', { hasText: 'Remove' }).first();
  await remove.waitFor({ timeout: T });
  out.confirm = await page.$eval('.monaco-dialog-box', (d) => d.innerText).catch(() => '');
  await shot('04-remove-confirm', 'removing a rule asks first');
  await remove.click();
  await page.locator('.notifications-toasts .notification-toast', { hasText: 'Removed' }).first().waitFor({ timeout: T });
  out.removedToast = await page.$eval('.notifications-toasts', (n) => n.innerText).catch(() => '');
  await page.waitForTimeout(600); // the toast's slide-in, for the picture
  await shot('05-removed', 'the rule removed');
}
