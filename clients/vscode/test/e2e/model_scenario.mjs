// Issue 39's VS Code end to end, "set up a model with a key from the panel against a key-checking
// endpoint, switch to plan mode and back, pick a model" (tests/clients/test_vscode_model.py owns the
// fake provider and the assertions). Run by drive.mjs (`scenario: "model"`) with its helpers.

/** @param {any} h drive.mjs's helpers: page, config, out, step, shot, openPanel, palette, send, theme, T */
export async function modelScenario(h) {
  const { page, config, out, step, shot, T } = h;
  const quick = page.locator('.quick-input-widget');
  const quickInput = page.locator('.quick-input-widget input');
  const rowsText = (frame) => frame.evaluate(() => [...document.querySelectorAll('#rows .row')].map((r) => r.innerText));

  /** Answers one quick-input step: waits for its title, types, Enter. */
  async function answer(title, text) {
    await page.locator('.quick-input-widget .quick-input-title', { hasText: title }).waitFor({ timeout: T });
    await quickInput.fill(text);
    const shown = await quick.evaluate((el) => el.innerText);
    await quickInput.press('Enter');
    step(`quick input "${title}"`);
    return shown;
  }

  /** The model picker's rows once the endpoint's list arrived. */
  async function pickerRows() {
    await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Model' }).waitFor({ timeout: T });
    await page.waitForFunction(() => {
      const w = document.querySelector('.quick-input-widget');
      // The list renders a moment after the placeholder changes (an empty list was read once in CI);
      // every model step has a row (a refused key is a row saying so).
      return w && !/Loading the endpoint/.test(w.querySelector('input')?.getAttribute('placeholder') ?? '')
        && w.querySelectorAll('.monaco-list-row').length > 0;
    }, null, { timeout: T });
    return page.$$eval('.quick-input-widget .monaco-list-row', (rows) => rows.map((r) => r.getAttribute('aria-label') ?? r.innerText));
  }

  async function pick(label) {
    const row = page.locator(`.quick-input-widget .monaco-list-row[aria-label*="${label}"]`).first();
    await row.waitFor({ timeout: T });
    await row.click();
    step(`picked ${label}`);
  }

  await h.workbench();
  const frame = await h.openPanel();
  out.sidebarWidth = await page.$eval('.part.sidebar', (b) => b.offsetWidth);
  // First run: nothing set up; the panel says so with the button.
  await frame.waitForSelector('.row .set-up-model', { timeout: T });
  out.firstRun = await rowsText(frame);
  await shot('01-first-run', 'first run with no key and no endpoint: the panel offers "Set up model"');

  // A prompt anyway: the server's missing-key error, with the button on its row.
  await h.send(frame, config.prompt);
  await frame.waitForSelector('.row.error .set-up-model', { timeout: T });
  out.missingKeyError = await frame.$eval('.row.error', (r) => r.innerText);
  await shot('02-missing-key-error', 'the missing-key error row carries the "Set up model" button');

  // Set up from that row: endpoint, a wrong key first (the endpoint refuses it), then the right one.
  await frame.locator('.row.error .set-up-model').click();
  out.endpointStep = await answer('(1/3): endpoint', config.baseUrl);
  await page.locator('.quick-input-widget .quick-input-title', { hasText: '(2/3)' }).waitFor({ timeout: T });
  out.keyInputType = await quickInput.getAttribute('type');
  await answer('(2/3): API key', config.wrongKey);
  out.refusedRows = await pickerRows();
  await shot('03-key-refused', 'the model step after a wrong key: the endpoint refused it');
  await pick('refused the key');
  await answer('(1/3): endpoint', config.baseUrl);
  await quickInput.fill(config.apiKey);
  out.keyMasked = await quickInput.getAttribute('type');
  await shot('04-key-step', 'the key step: a password box, kept in VS Code\'s secret storage');
  await quickInput.press('Enter');
  out.modelRows = await pickerRows();
  await shot('05-model-picker', 'the model step: the endpoint\'s models, then the settings\'');
  await pick(config.firstModel);
  await frame.waitForFunction((m) => document.querySelector('#rows')?.innerText.includes(`Model: ${m}`), config.firstModel, { timeout: T });

  // A turn now succeeds.
  await h.send(frame, config.prompt);
  await frame.waitForFunction((x) => document.querySelector('#rows')?.innerText.includes(x), config.answer, { timeout: T });
  out.afterSetUp = await rowsText(frame);
  await shot('06-turn-after-set-up', 'the first answer with the key from the panel');

  // Plan mode and back from the panel's switch (webview/planMode.ts): a turn in plan mode, then act.
  await frame.locator('#mode-plan').click();
  await frame.waitForSelector('#mode-plan[aria-checked="true"]', { timeout: T });
  await frame.waitForSelector('#composer.planning', { timeout: T });
  await h.send(frame, config.planPrompt);
  await frame.waitForFunction((x) => document.querySelector('#rows')?.innerText.includes(x), config.planAnswer, { timeout: T });
  await frame.waitForSelector('#plan-ready:not([hidden])', { timeout: T });
  out.planReady = await frame.$eval('#plan-ready', (el) => el.innerText);
  await shot('07-plan-mode', 'plan mode from the panel: the plan answered, "Start" offered');
  await frame.locator('#mode-act').click();
  await frame.waitForSelector('#mode-act[aria-checked="true"]', { timeout: T });
  out.backToAct = !(await frame.$('#composer.planning'));
  await shot('07b-act-mode', 'back to act mode from the switch');

  // /model in the composer: the picker, another model, from the next request.
  await h.send(frame, '/model ');
  out.slashModelRows = await pickerRows();
  await pick(config.secondModel);
  await frame.waitForFunction((m) => document.querySelector('#rows')?.innerText.includes(`Model: ${m}`), config.secondModel, { timeout: T });
  await h.send(frame, config.secondPrompt);
  await frame.waitForFunction((x) => document.querySelector('#rows')?.innerText.includes(x), config.secondAnswer, { timeout: T });
  await shot('08-model-picked', 'after /model: the next turn ran on the picked model');

  // The gauge names the model and offers the picker.
  await page.locator('.part.statusbar [aria-label^="shiro-neko context"]').first().click();
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Model:' }).first().waitFor({ timeout: T });
  out.gaugeRows = await page.$$eval('.quick-input-widget .monaco-list-row', (rows) => rows.map((r) => r.innerText));
  await shot('09-gauge-model', 'the gauge\'s explanation names the model and opens the picker');
  await page.keyboard.press('Escape');

  // The light theme: the picker and the set-up button row.
  await h.theme('Light Modern', 'vs');
  await h.send(frame, '/model ');
  await pickerRows();
  await shot('10-light-model-picker', 'the model picker in the light theme');
  await page.keyboard.press('Escape');
  out.finalRows = await rowsText(frame);
  await shot('11-light-panel', 'the panel in the light theme after the set-up');
}
