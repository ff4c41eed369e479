-- Headless Neovim: what the agent changes, seen and answered in Neovim (issue 41 items 3, 7, 8 and
-- issue 37's effort and reasoning). Run by tests/clients/test_nvim_review.py:
--   nvim --headless -i NONE -u tests/clients/nvim_review_test.lua
-- Env as tests/clients/nvim_chat_test.lua. The watchdog, the results file and the exit codes:
-- tests/clients/nvim_harness.lua.

local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/nvim_harness.lua")
  .start({ watchdog_ms = 240000, options = { columns = 160, lines = 40, hidden = true }, results = { asked = {} } })
local results, step, wait = h.results, h.step, h.wait
local server, workspace = h.server, h.workspace
local api = vim.api

--- A window's screen rectangle {top, left, bottom, right} (inclusive, 0-based), border included:
--- floats from their config (their position is only computed at a redraw), splits from Neovim.
local function rect(win)
  local c = api.nvim_win_get_config(win)
  local h, w = api.nvim_win_get_height(win), api.nvim_win_get_width(win)
  if c.relative ~= "" then
    local b = (c.border and c.border ~= "none" and c.border ~= "") and 2 or 0
    local row = type(c.row) == "table" and c.row[false] or c.row
    local col = type(c.col) == "table" and c.col[false] or c.col
    local top = c.anchor:sub(1, 1) == "S" and row - (h + b) or row
    local left = c.anchor:sub(2, 2) == "E" and col - (w + b) or col
    return { top = top, left = left, bottom = top + h + b - 1, right = left + w + b - 1, floating = true }
  end
  local pos = api.nvim_win_get_position(win)
  -- a split's statusline is part of what it covers
  return { top = pos[1], left = pos[2], bottom = pos[1] + h, right = pos[2] + w - 1, floating = false }
end

local function overlap(a, b)
  return not (a.right < b.left or b.right < a.left or a.bottom < b.top or b.bottom < a.top)
end

local function chat_win()
  local buf = require("shiro.chat").buf
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(w) == buf then
      return w
    end
  end
end

local function float_state()
  for _, w in ipairs(api.nvim_list_wins()) do
    local buf = api.nvim_win_get_buf(w)
    if api.nvim_buf_get_name(buf):match("shiro://approval$") then
      return { lines = api.nvim_buf_get_lines(buf, 0, -1, false), filetype = vim.bo[buf].filetype,
        floating = api.nvim_win_get_config(w).relative ~= "" }
    end
  end
  return nil
end

local function tab_state()
  local wins = {}
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    local buf = api.nvim_win_get_buf(w)
    table.insert(wins, { name = api.nvim_buf_get_name(buf), diff = vim.wo[w].diff,
      lines = api.nvim_buf_get_lines(buf, 0, -1, false) })
  end
  return { tabs = #api.nvim_list_tabpages(), wins = wins }
end

local function run()
  local shiro = require("shiro")
  shiro.setup({ cmd = server, settings = { approvals = "ask", model = "fake-model" },
    chat = { size = 70 } })

  -- the approval menu: first "Show the whole diff", then "Deny with reason…" for the first edit,
  -- "Allow" for the second
  local approvals = 0
  vim.ui.input = function(opts, on_confirm)
    table.insert(results.asked, { kind = "input", prompt = opts.prompt })
    on_confirm("keep hello; add a GREETING constant instead")
  end
  vim.ui.select = function(items, opts, on_choice)
    local titles = h.titles(items, opts)
    local asked = { prompt = opts.prompt, kind = opts.kind, items = titles, float = float_state(), tab = tab_state() }
    table.insert(results.asked, asked)
    local want = "Allow"
    if opts.kind == "shiro_approval" then
      approvals = approvals + 1
      want = ({ "Show the whole diff", "Deny with reason…" })[approvals] or "Allow"
    end
    local choice = items[1]
    for i, item in ipairs(items) do
      if titles[i] == want then
        choice = item
      end
    end
    if want == "Show the whole diff" and vim.fn.has("nvim-0.10") == 1 then
      -- the menu waits while the user reads the diff tab; they close it with q
      vim.defer_fn(function()
        on_choice(choice, 1)
        vim.defer_fn(function()
          results.whole_diff_tab = tab_state()
          vim.cmd("normal q")
        end, 50)
      end, 50)
      return
    end
    on_choice(choice, 1)
  end

  vim.cmd("edit " .. vim.fn.fnameescape(workspace .. "/hello.py"))
  local code_buf = api.nvim_get_current_buf()

  -- 1. a turn that reasons (a summary) and writes a task list; the chat is open at the right
  step("chat 1")
  vim.cmd("ShiroChat plan it")
  wait("turn 1", 10000, function() return shiro.state.turns_ended >= 1 end)
  local chat = require("shiro.chat")
  results.chat_lines_1 = chat.lines()
  local cw = chat_win()
  results.reasoning_folds = {}
  for i, line in ipairs(chat.lines()) do
    if line:match("^  ┊") then
      table.insert(results.reasoning_folds, {
        line = line,
        closed = api.nvim_win_call(cw, function() return vim.fn.foldclosed(i) end) ~= -1,
        text = api.nvim_win_call(cw, function() return vim.fn.foldtextresult(i) end),
      })
    end
  end

  -- 2. the task list: it must leave the whole transcript visible
  step("todos")
  local panel = require("shiro.panel")
  vim.cmd("ShiroTodos")
  wait("the task list", 3000, function() return panel.todos_visible() end)
  local tw = panel.todos_win()
  results.todos_dock = { todos = rect(tw), chat = rect(chat_win()), columns = vim.o.columns,
    lines = api.nvim_buf_get_lines(api.nvim_win_get_buf(tw), 0, -1, false) }
  results.todos_dock.overlap = overlap(results.todos_dock.todos, results.todos_dock.chat)
  vim.cmd("ShiroTodos")
  shiro.config.todos.layout = "float"
  vim.cmd("ShiroTodos")
  wait("the task list float", 3000, function() return panel.todos_visible() end)
  tw = panel.todos_win()
  results.todos_float = { todos = rect(tw), chat = rect(chat_win()) }
  results.todos_float.overlap = overlap(results.todos_float.todos, results.todos_float.chat)
  vim.cmd("ShiroTodos")

  -- 3. an edit to approve: the diff first, the whole diff in a tab, then a denial with a reason
  step("chat 2")
  vim.cmd("ShiroChat rename the greeting")
  wait("turn 2", 10000, function() return shiro.state.turns_ended >= 2 end)
  results.turn_end_2 = shiro.state.last_turn_end
  results.after_approval = tab_state()
  results.disk_after_deny = vim.fn.readfile(workspace .. "/hello.py")

  -- 4. an edit allowed: "1 file changed" in the chat, :ShiroDiff, then :ShiroUndo of the file
  step("chat 3")
  vim.cmd("ShiroChat now do rename it")
  wait("turn 3", 10000, function() return shiro.state.turns_ended >= 3 end)
  results.turn_end_3 = shiro.state.last_turn_end
  results.chat_lines_3 = chat.lines()
  results.disk_after_allow = vim.fn.readfile(workspace .. "/hello.py")
  step("diff")
  vim.cmd("Shiro diff")
  wait("the diff buffer", 5000, function() return api.nvim_buf_get_name(0) == "shiro://diff" end)
  results.diff_buffer = { lines = api.nvim_buf_get_lines(0, 0, -1, false), filetype = vim.bo.filetype }
  vim.cmd("close")
  step("undo")
  local seen = #results.notifications
  vim.cmd("ShiroUndo hello.py")
  wait("the undo", 5000, function() return #results.notifications > seen end)
  results.undo_notification = results.notifications[#results.notifications]
  results.code_buffer_after_undo = api.nvim_buf_get_lines(code_buf, 0, -1, false)
  results.disk_after_undo = vim.fn.readfile(workspace .. "/hello.py")
  results.chat_lines_undo = chat.lines()

  -- 5. :Shiro effort high, then a turn: the request carries it
  step("effort")
  seen = #results.notifications
  vim.cmd("Shiro effort high")
  wait("the effort answer", 5000, function() return #results.notifications > seen end)
  results.effort_notification = results.notifications[#results.notifications]
  vim.cmd("ShiroChat thanks")
  wait("turn 4", 10000, function() return shiro.state.turns_ended >= 4 end)

  step("stop")
  h.stop(shiro)
  step("done")
end

h.run(run, { at_vim_enter = true })
