// A `task` subagent's approval in real VS Code (tests/clients/test_vscode_subagent_approval.py owns
// the fake provider and the assertions): the card of the subagent's call says the task subagent
// asks, at the default sidebar width; Deny, and the turn goes on. Run by drive.mjs
// (`scenario: "subagent"`) with its helpers.

/** @param {any} h drive.mjs's helpers: page, config, out, step, shot, openPanel, send, T */
export async function subagentScenario(h) {
  const { page, config, out, shot, T } = h;
  await h.workbench();
  const frame = await h.openPanel();
  out.sidebarWidth = await page.$eval('.part.sidebar', (b) => b.offsetWidth);
  await h.send(frame, config.prompt);
  await frame.waitForSelector('#rows .tool.asking', { timeout: T });
  out.askCard = await frame.$eval('#rows .tool.asking', (c) => ({
    title: c.querySelector('.ask-title-text')?.textContent ?? '',
    nested: !!c.closest('.row.nested'),
    // Anything wider than the view: the words must wrap, never scroll sideways.
    overflows: [...c.querySelectorAll('.ask-title, .ask-buttons button')]
      .some((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5),
  }));
  await shot('01-subagent-asks', "a task subagent's web_fetch waiting for approval: the card says the task subagent asks");
  await frame.locator('#rows .tool.asking button', { hasText: 'Deny' }).first().click();
  // The subagent's card re-renders as answered; the next one open is the main agent's.
  await frame.waitForFunction(() => [...document.querySelectorAll('#rows .tool.asking .ask-title-text')]
    .some((t) => t.textContent.startsWith('shiro-neko wants to')), null, { timeout: T });
  out.mainCard = await frame.$eval('#rows .tool.asking', (c) => c.querySelector('.ask-title-text')?.textContent ?? '');
  await shot('02-main-asks', "the main agent's own command after the subagent's report: shiro-neko asks");
  await frame.locator('#rows .tool.asking button', { hasText: 'Deny' }).first().click();
  await frame.waitForFunction((t) => document.querySelector('#rows')?.innerText.includes(t), config.answer, { timeout: T });
  await frame.waitForFunction(() => document.querySelector('#busy')?.hidden === true, null, { timeout: T });
  await shot('03-done', 'both denied; the turn ended');
}
