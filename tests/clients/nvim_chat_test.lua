-- Headless Neovim driving the shiro plugin against the real server and the fake provider.
-- Run by tests/clients/test_nvim.py:  nvim --headless -i NONE -u tests/clients/nvim_chat_test.lua
-- Env: SHIRO_NVIM_PLUGIN (clients/nvim), SHIRO_NVIM_SERVER (JSON list: the server command),
--      SHIRO_NVIM_WORKSPACE (workspace folder, also the cwd), SHIRO_NVIM_OUT (result JSON path).
-- The watchdog, the results file and the exit codes: tests/clients/nvim_harness.lua.

local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/nvim_harness.lua")
  .start({ watchdog_ms = 240000, options = { columns = 120, lines = 40, hidden = true } })
local results, step, wait = h.results, h.step, h.wait
local server, workspace = h.server, h.workspace

local function run()
  step("before setup")
  -- plugin/shiro.lua was sourced at startup: the commands exist before setup()
  results.commands_before_setup = vim.fn.exists(":ShiroChat") == 2 and vim.fn.exists(":ShiroTodos") == 2
  local shiro = require("shiro")
  shiro.setup({ cmd = server, settings = { approvals = "ask", model = "fake-model" } })

  local statuses, todos = {}, {}
  shiro.on("status", function(p) table.insert(statuses, p) end)
  shiro.on("todos", function(p) table.insert(todos, p) end)

  -- approvals: answer "Allow" and remember what was asked
  results.asked = {}
  vim.ui.select = function(items, opts, on_choice)
    local titles = h.titles(items, opts)
    table.insert(results.asked, { prompt = opts.prompt, kind = opts.kind, items = titles })
    local choice = items[1]
    if opts.kind == "shiro_rewind" then
      choice = "Files only" -- the session was compacted by then: its prompts are a summary now
    end
    if opts.kind == "shiro_approval" then
      for _, item in ipairs(items) do
        if item.title == "Allow" then
          choice = item
        end
      end
      if vim.fn.has("nvim-0.11") == 1 then
        -- an asynchronous picker (like telescope or dressing): the answer comes later
        results.approval_answered_later = true
        return vim.defer_fn(function() on_choice(choice, 1) end, 100)
      end
    end
    on_choice(choice, 1)
  end

  -- a real file buffer: the client attaches it (the agent's edits go through applyEdit)
  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/hello.py"))
  local code_buf = vim.api.nvim_get_current_buf()

  -- 1. a chat that writes a task list and answers
  step("chat 1")
  vim.cmd("ShiroChat plan it")
  wait("the first turn_end", 10000, function() return shiro.state.turns_ended >= 1 end)
  wait("the idle status", 3000, function() return shiro.state.status and shiro.state.status.running == false end)
  results.root = shiro.state.root
  results.attached = vim.lsp.buf_is_attached(code_buf, shiro.state.client_id)
  results.turn_end = shiro.state.last_turn_end
  results.chat_lines = require("shiro.chat").lines()
  results.todos = shiro.state.todos
  results.todos_count = #todos
  results.status = shiro.state.status
  results.statuses_count = #statuses
  results.statusline = (shiro.statusline())
  results.statusline_component = shiro.statusline_component()
  -- what a 'statusline' using the documented expression shows
  local expr = "%{%v:lua.require'shiro'.statusline_component()%}"
  results.statusline_evaluated = vim.api.nvim_eval_statusline(expr, {}).str

  -- 2. :ShiroTodos toggles the floating task list
  step("todos panel")
  local panel = require("shiro.panel")
  vim.cmd("ShiroTodos")
  wait("the task list window", 3000, function() return panel.todos_visible() end)
  local win = panel.todos_win()
  results.todos_window = {
    lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false),
    floating = vim.api.nvim_win_get_config(win).relative ~= "",
  }
  vim.cmd("ShiroTodos")
  results.todos_window.closed = not panel.todos_visible()

  -- 3. a prompt typed into the chat buffer's input and sent with <C-s>; a draft typed while the
  --    turn runs stays in the input. The edit needs approval: vim.ui.select answers Allow, the
  --    open buffer is edited through applyEdit and saved through shiro/saveDocuments.
  step("chat 2")
  local keys = function(k)
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(k, true, false, true), "x", false)
  end
  vim.cmd("ShiroChat")
  keys("<Esc>")
  results.chat_focused = vim.api.nvim_buf_get_name(0) == "shiro://chat"
  keys("Arename the greeting<C-s><Esc>")
  results.input_after_send = vim.api.nvim_buf_get_lines(0, -2, -1, false)[1]
  keys("Adraft text<Esc>")
  wait("the second turn_end", 10000, function() return shiro.state.turns_ended >= 2 end)
  results.chat_lines_2 = require("shiro.chat").lines()
  vim.cmd("wincmd p")
  results.turn_end_2 = shiro.state.last_turn_end
  results.code_buffer = vim.api.nvim_buf_get_lines(code_buf, 0, -1, false)
  results.code_modified = vim.bo[code_buf].modified
  results.disk_after_chat_2 = vim.fn.readfile(workspace .. "/hello.py")

  -- 4. a new session, then :ShiroSessions picks the saved one and resumes it
  step("new session")
  local before = shiro.state.session_id
  results.first_session = before
  vim.cmd("ShiroNew")
  local function chat_has(prefix)
    for _, line in ipairs(require("shiro.chat").lines()) do
      if line:sub(1, #prefix) == prefix then
        return true
      end
    end
    return false
  end
  wait("the new session", 5000, function() return chat_has("== new session ") end)
  results.new_session_lines = require("shiro.chat").lines()
  step("sessions")
  local resumed_todos = #todos
  vim.cmd("ShiroSessions")
  wait("the resumed session", 5000, function() return chat_has("== resumed ") end)
  wait("the todos of the resumed session", 3000, function() return #todos > resumed_todos end)
  results.resumed_lines = require("shiro.chat").lines()
  results.resumed_todos = todos[#todos]

  -- 5. compaction (the summary is a side request to the provider), notes, abort when idle,
  --    and a resume prefix that matches nothing
  step("compact")
  vim.cmd("ShiroCompact")
  wait("the compaction", 5000, function() return chat_has("-- compacted: ") end)
  results.compacted_lines = require("shiro.chat").lines()
  step("notes")
  vim.cmd("ShiroNotes")
  wait("the notes window", 3000, function() return vim.api.nvim_buf_get_name(0) == "shiro://notes" end)
  results.notes_lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  vim.cmd("close")
  step("abort")
  local seen = #results.notifications
  vim.cmd("ShiroAbort")
  wait("the abort answer", 3000, function() return #results.notifications > seen end)
  results.abort_notification = results.notifications[#results.notifications]
  step("resume unknown")
  seen = #results.notifications
  vim.cmd("ShiroResume zzzzzzzz")
  wait("the refusal", 3000, function() return #results.notifications > seen end)
  results.resume_refusal = results.notifications[#results.notifications]

  -- 6. :ShiroRewind picks the newest checkpoint (chat 2's edit), files only: the open buffer
  --    goes back through the same applyEdit path as the agent's edit
  step("rewind")
  seen = #results.notifications
  vim.cmd("ShiroRewind")
  wait("the rewind", 5000, function() return #results.notifications > seen end)
  results.rewind_notification = results.notifications[#results.notifications]
  results.rewound_buffer = vim.api.nvim_buf_get_lines(code_buf, 0, -1, false)

  -- 7. the server stops cleanly
  step("stop")
  h.stop(shiro)
  step("done")
end

h.run(run, { at_vim_enter = true })
