-- Headless Neovim: what the agent changes, seen and answered in Neovim (issue 41 items 3, 7, 8 and
-- issue 37's effort and reasoning). Run by tests/clients/test_nvim_review.py:
--   nvim --headless -i NONE -u tests/clients/nvim_review_test.lua
-- Env as tests/clients/nvim_chat_test.lua. Exit 0 when the script ran to the end (pytest judges
-- the JSON), 1 on a Lua error, 2 on timeout.

local SLACK = 6 -- waits are for conditions; a shared machine may be slow
local WATCHDOG_MS = 240000
vim.defer_fn(function() vim.cmd("cquit 2") end, WATCHDOG_MS)

local function env(name)
  local value = os.getenv(name)
  if not value or value == "" then
    io.stderr:write("missing environment variable " .. name .. "\n")
    vim.cmd("cquit 1")
  end
  return value
end

local out_path = env("SHIRO_NVIM_OUT")
local plugin = env("SHIRO_NVIM_PLUGIN")
local server = vim.fn.json_decode(env("SHIRO_NVIM_SERVER"))
local workspace = env("SHIRO_NVIM_WORKSPACE")

vim.opt.runtimepath:prepend(plugin)
vim.o.columns, vim.o.lines = 160, 40
vim.o.hidden = true

local api = vim.api
local v = vim.version()
local results = {
  nvim_version = string.format("%d.%d.%d", v.major, v.minor, v.patch),
  notifications = {},
  errors = {},
  steps = {},
  asked = {},
}

local function write_results()
  local f = assert(io.open(out_path, "w"))
  f:write(vim.fn.json_encode(results))
  f:close()
end

vim.defer_fn(function()
  results.errors[#results.errors + 1] = "watchdog: timed out at step " .. tostring(results.steps[#results.steps])
  pcall(write_results)
  vim.cmd("cquit 2")
end, WATCHDOG_MS - 1000)

vim.notify = function(msg, level)
  table.insert(results.notifications, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end

local function step(name)
  table.insert(results.steps, name)
end

local function wait(what, ms, cond)
  if not vim.wait(ms * SLACK, cond, 20) then
    error("timed out waiting for " .. what .. " (" .. ms * SLACK .. " ms)")
  end
end

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
    local titles = {}
    for _, item in ipairs(items) do
      table.insert(titles, opts.format_item and opts.format_item(item) or tostring(item))
    end
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
  local id = shiro.state.client_id
  shiro.stop()
  wait("the server to exit", 5000, function() return vim.lsp.get_client_by_id(id) == nil or shiro.state.client_id == nil end)
  step("done")
end

vim.api.nvim_create_autocmd("VimEnter", {
  once = true,
  callback = function()
    local ok, err = xpcall(run, debug.traceback)
    if not ok then
      table.insert(results.errors, tostring(err))
    end
    results.messages = vim.fn.execute("messages")
    write_results()
    vim.cmd(ok and "qall!" or "cquit 1")
  end,
})
