// Issue 40's VS Code end to end, "a custom command from the composer's menu"
// (tests/clients/test_vscode_skills.py owns the workspace's command, the fake provider and the
// assertions). Run by drive.mjs (`scenario: "skills"`) with its helpers.

/** @param {any} h drive.mjs's helpers: page, config, out, step, shot, openPanel, T */
export async function skillsScenario(h) {
  const { config, out, step, shot, T } = h;
  await h.workbench();
  const frame = await h.openPanel();
  const input = frame.locator('#input');
  // The menu gets shiro.commands' list once the server answers: type `/` plus the start of the name.
  await input.click();
  await input.fill('/');
  await input.type(config.typed);
  await frame.waitForFunction((name) => [...document.querySelectorAll('#popup .option-label')]
    .some((o) => o.textContent.startsWith(`/${name}`)), config.command, { timeout: T }).catch(async (err) => {
    // What the menu showed instead, for the failure's message.
    const seen = await frame.evaluate(() => ({ hidden: document.querySelector('#popup')?.hidden, input: document.querySelector('#input')?.value,
      options: [...document.querySelectorAll('#popup .option')].map((o) => o.textContent) })).catch(() => null);
    throw new Error(`${err.message}\nthe menu: ${JSON.stringify(seen)}`);
  });
  step(`the menu offers /${config.command}`);
  // VS Code re-focusing the webview blurs the input for a moment: the menu must stay open (in CI it
  // closed 150 ms later, and "/rev" sat in a focused input with no menu). A second is far past that.
  await frame.evaluate(() => { const i = document.querySelector('#input'); i.blur(); i.focus(); });
  await new Promise((r) => setTimeout(r, 1000));
  out.menuAfterRefocus = await frame.evaluate(() => !document.querySelector('#popup').hidden);
  out.menu = await frame.$$eval('#popup .option', (o) => o.map((e) => e.innerText.replace(/\s+/g, ' ').trim()));
  await shot('01-custom-command-menu', `the composer's / menu offers the project's /${config.command} with its description and hint`);
  // Picked with the mouse: the name goes into the input, the arguments are typed after it.
  await frame.locator('#popup .option', { hasText: `/${config.command}` }).first().dispatchEvent('mousedown');
  out.afterPick = await input.inputValue();
  step('picked the command from the menu');
  await input.type(config.args);
  await input.press('Enter');
  await frame.waitForFunction((x) => document.querySelector('#rows')?.innerText.includes(x), config.answer, { timeout: T });
  out.rows = await frame.$$eval('#rows .row', (rows) => rows.map((r) => ({ kind: r.className, text: r.innerText })));
  await shot('02-custom-command-answered', 'the prompt as typed in the transcript, the answer to the expanded command below it');
}
