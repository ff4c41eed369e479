// Issue 40's VS Code end to end: a PNG pasted into the composer becomes a thumbnail chip, is sent
// with the prompt and reaches the model (tests/clients/test_vscode_media.py owns the fake provider
// and checks the request); a `task` subagent's rows show nested under its call. Run by drive.mjs
// (`scenario: "media"`) with its helpers.

/** @param {any} h drive.mjs's helpers: page, config, out, step, shot, openPanel, send, T */
export async function mediaScenario(h) {
  const { config, out, step, shot, T } = h;
  const rowsText = (frame) => frame.evaluate(() => [...document.querySelectorAll('#rows .row')].map((r) => r.innerText));

  await h.workbench();
  const frame = await h.openPanel();
  const input = frame.locator('#input');
  await input.click();
  await input.fill(config.prompt);
  // A paste as the browser delivers one: a ClipboardEvent whose DataTransfer holds a PNG file.
  await frame.evaluate(({ png, name }) => {
    const bytes = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
    const data = new DataTransfer();
    data.items.add(new File([bytes], name, { type: 'image/png' }));
    const input = document.getElementById('input');
    input.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, { png: config.png, name: config.imageName });
  await frame.waitForSelector('.image-chip img', { timeout: T });
  out.chip = await frame.$eval('.image-chip', (c) => ({ text: c.innerText, width: c.querySelector('img').naturalWidth }));
  out.draftAfterPaste = await input.inputValue();
  await shot('01-pasted-image', 'a pasted screenshot as a thumbnail chip above the composer, removable');

  // A second paste, removed again with its chip's x: only the first is sent.
  await frame.evaluate(({ png }) => {
    const bytes = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
    const data = new DataTransfer();
    data.items.add(new File([bytes], 'second.png', { type: 'image/png' }));
    document.getElementById('input').dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, { png: config.png });
  await frame.waitForFunction(() => document.querySelectorAll('.image-chip').length === 2, null, { timeout: T });
  await frame.locator('.image-chip button[aria-label="Remove image second.png"]').click();
  await frame.waitForFunction(() => document.querySelectorAll('.image-chip').length === 1, null, { timeout: T });
  step('removed the second image');

  await input.press('Enter');
  step('sent the prompt with its image');
  await frame.waitForFunction((x) => document.querySelector('#rows')?.innerText.includes(x), config.answer, { timeout: T });
  out.chipsAfterSend = await frame.$$eval('.image-chip', (c) => c.length);
  out.afterImage = await rowsText(frame);
  await shot('02-image-sent', 'the prompt row shows the image it carried; the answer below');

  // A task subagent: its tool rows nested under the task call.
  await h.send(frame, config.taskPrompt);
  await frame.waitForFunction((x) => document.querySelector('#rows')?.innerText.includes(x), config.taskAnswer, { timeout: T });
  out.nested = await frame.$$eval('#rows .row.nested', (rows) => rows.map((r) => r.innerText));
  out.nestedIndent = await frame.$$eval('#rows .row.nested', (rows) => rows.map((r) => parseFloat(getComputedStyle(r).marginLeft)));
  await frame.evaluate(() => document.querySelector('#rows .row.nested')?.scrollIntoView({ block: 'center' }));
  await shot('03-subagent-nested', "a task subagent's calls nested under the task call");
}
