-- Headless Neovim with pyright (a real language server) and the shiro plugin, for issue 38.
-- Run by tests/clients/test_nvim_editor.py:  nvim --headless -i NONE -u tests/clients/nvim_editor_test.lua
-- Env: SHIRO_NVIM_PLUGIN, SHIRO_NVIM_SERVER (JSON list), SHIRO_NVIM_WORKSPACE, SHIRO_NVIM_OUT,
--      SHIRO_NVIM_PYRIGHT (pyright-langserver).
-- The watchdog, the results file and the exit codes: tests/clients/nvim_harness.lua.

local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/nvim_harness.lua")
  .start({ watchdog_ms = 280000, options = { columns = 120, lines = 40, hidden = true } })
local results, step, wait = h.results, h.step, h.wait
local server, workspace = h.server, h.workspace
local pyright = h.env("SHIRO_NVIM_PYRIGHT")

local function run()
  local shiro = require("shiro")
  shiro.setup({ cmd = server, settings = { approvals = "auto", model = "test-model", diagnosticsWaitMs = 8000 } })
  local app = workspace .. "/app.py"
  vim.cmd("edit " .. vim.fn.fnameescape(app))
  local buf = vim.api.nvim_get_current_buf()
  -- pyright, attached the way a user's config attaches it
  vim.lsp.start({ name = "pyright", cmd = { pyright, "--stdio" }, root_dir = workspace,
                  settings = { python = { analysis = { diagnosticMode = "openFilesOnly" } } } }, { bufnr = buf })
  step("pyright started")
  -- the file's existing error, before anything is edited
  wait("pyright's first diagnostics", 20000, function() return #vim.diagnostic.get(buf) > 0 end)
  results.before = vim.tbl_map(function(d) return d.message end, vim.diagnostic.get(buf))
  shiro.start()
  wait("the shiro client", 20000, function() return shiro.state.ready and vim.lsp.buf_is_attached(buf, shiro.state.client_id) end)
  step("shiro attached")

  -- A prompt from the file's window (the cursor on x, line 6): its context goes with it; the
  -- scripted edit introduces a type error, which pyright reports and the next request holds.
  vim.api.nvim_win_set_cursor(0, { 6, 0 })
  vim.cmd("doautocmd CursorMoved")
  local ended = 0
  shiro.on("event", function(p) if p.type == "turn_end" then ended = ended + 1 end end)
  -- As a user sends it about a line: `:6ShiroChat` (from visual mode `:'<,'>ShiroChat`) makes the
  -- line the prompt's selection.
  vim.cmd("6ShiroChat make x a word")
  wait("the edit's turn", 60000, function() return ended >= 1 end)
  results.after_edit = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  step("edit turn ended")

  -- find_definition through pyright
  shiro.chat("where is greet defined?")
  wait("the navigation turn", 60000, function() return ended >= 2 end)
  step("navigation turn ended")

  -- shiro's code actions on the error, as vim.lsp.buf.code_action() asks for them
  wait("the new error", 20000, function()
    return #vim.tbl_filter(function(d) return d.lnum == 5 end, vim.diagnostic.get(buf)) > 0
  end)
  local line_diags = vim.tbl_map(function(d) return d.user_data and d.user_data.lsp end,
    vim.diagnostic.get(buf, { lnum = 5 }))
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = 5, character = 0 }, ["end"] = { line = 5, character = 0 } },
    context = { diagnostics = line_diags },
  }
  local client = vim.lsp.get_client_by_id(shiro.state.client_id)
  local answer = client.request_sync and client:request_sync("textDocument/codeAction", params, 10000, buf)
  local actions = (answer and answer.result) or {}
  results.code_actions = vim.tbl_map(function(a) return a.title end, actions)
  step("code actions")

  -- "Edit with shiro-neko…": the instruction, the diff tab, ga accepts
  vim.ui.input = function(_, cb) cb(os.getenv("SHIRO_NVIM_INSTRUCTION")) end
  local edit_action
  for _, a in ipairs(actions) do
    if a.title:match("^Edit with shiro%-neko") then edit_action = a end
  end
  client:exec_cmd(edit_action.command, { bufnr = buf })
  local editor = require("shiro.editor")
  wait("the inline edit's diff", 60000, function() return editor.showing ~= nil end)
  results.diff_tabs = #vim.api.nvim_list_tabpages()
  results.proposed = editor.showing.lines
  results.diff_on = vim.wo.diff
  vim.api.nvim_feedkeys("ga", "x", false)
  wait("the inline edit to be resolved", 30000, function() return editor.last_resolved ~= nil end)
  results.resolved = editor.last_resolved
  wait("the accepted edit in the buffer", 20000, function()
    return vim.api.nvim_buf_get_lines(buf, 5, 6, false)[1] == "x: int = 1"
  end)
  results.final = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  results.tabs_after = #vim.api.nvim_list_tabpages()
  step("inline edit accepted")
end

h.run(run)
