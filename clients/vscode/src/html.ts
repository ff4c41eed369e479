// The chat webview's HTML: pure (cspSource, nonce and URIs in, string out) so tests can check
// the policy and serve the page in a browser without VS Code.

export interface PanelAssets {
  cspSource: string;
  nonce: string;
  scriptUri: string;
  styleUri: string;
  codiconUri: string;
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `font-src ${cspSource}`,
    `img-src ${cspSource} data: blob:`,
    "connect-src 'none'",
    "frame-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

export function panelHtml(a: PanelAssets): string {
  const csp = escapeAttr(contentSecurityPolicy(a.cspSource, a.nonce));
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeAttr(a.codiconUri)}" nonce="${a.nonce}">
<link rel="stylesheet" href="${escapeAttr(a.styleUri)}" nonce="${a.nonce}">
<title>Shiro Neko chat</title>
</head>
<body>
<main id="app">
  <div id="transcript" role="log" aria-label="Conversation" aria-live="off" tabindex="0">
    <div id="older" hidden><button type="button" class="link" id="load-older">Show earlier messages</button></div>
    <div id="rows"></div>
    <div id="empty" class="empty">
      <div class="empty-title"><span class="codicon codicon-comment-discussion"></span> Ask shiro-neko</div>
      <div class="empty-hint">Type <kbd>@</kbd> to attach a file, <kbd>/</kbd> for commands. <kbd>Enter</kbd> sends, <kbd>Esc</kbd> stops.</div>
    </div>
  </div>
  <button type="button" id="jump" class="jump" hidden aria-label="Jump to latest"><span class="codicon codicon-arrow-down"></span> Jump to latest</button>
  <div id="announce" class="sr-only" aria-live="polite"></div>
  <footer id="composer">
    <div id="queue" role="list" aria-label="Queued prompts"></div>
    <div id="chips" role="list" aria-label="Attached files"></div>
    <div id="plan-ready" class="plan-ready" role="group" aria-label="Plan ready" hidden>
      <span class="codicon codicon-checklist"></span><span class="plan-ready-text">Plan ready</span>
      <button type="button" id="plan-start" class="primary" title="Act mode with the approvals as they are, then carry out the plan">Start</button>
      <button type="button" id="plan-start-auto" class="secondary" title="Act mode with edits run unasked (auto-edit), then carry out the plan">Start, auto-edit</button>
    </div>
    <div class="input-wrap">
      <div id="popup" role="listbox" aria-label="Suggestions" hidden></div>
      <textarea id="input" rows="1" placeholder="Ask shiro-neko… @ file, / command" aria-label="Message shiro-neko"
        aria-autocomplete="list" aria-controls="popup" aria-expanded="false"></textarea>
      <div class="input-actions">
        <div id="mode-switch" class="mode-switch" role="radiogroup" aria-label="Mode">
          <button type="button" id="mode-act" role="radio" aria-checked="true" title="Act: the agent may change files (approvals apply)">Act</button>
          <button type="button" id="mode-plan" role="radio" aria-checked="false" title="Plan: the agent reads and plans; nothing is changed">Plan</button>
        </div>
        <span id="busy" class="busy" hidden><span class="codicon codicon-loading codicon-modifier-spin"></span> Working…</span>
        <button type="button" id="stop" class="icon-button" title="Stop (Esc)" aria-label="Stop" hidden><span class="codicon codicon-debug-stop"></span></button>
        <button type="button" id="send" class="icon-button primary" title="Send (Enter)" aria-label="Send"><span class="codicon codicon-send"></span></button>
      </div>
    </div>
  </footer>
</main>
<script nonce="${a.nonce}" src="${escapeAttr(a.scriptUri)}"></script>
</body>
</html>`;
}
