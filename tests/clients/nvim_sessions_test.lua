-- Headless Neovim: saved sessions (issue 40): search, resume, rename, export, delete. Run by
-- tests/clients/test_nvim_sessions.py: nvim --headless -i NONE -u tests/clients/nvim_sessions_test.lua
-- Env as tests/clients/nvim_chat_test.lua. Exit 0 when the script ran to the end (pytest judges
-- the JSON), 1 on a Lua error, 2 on timeout.

local SLACK = 6
local WATCHDOG_MS = 180000
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
local home = env("SHIRO_NEKO_HOME")

vim.opt.runtimepath:prepend(plugin)
vim.o.columns, vim.o.lines = 160, 40

local results = { notifications = {}, errors = {}, steps = {}, asked = {} }

local function write_results()
  local f = assert(io.open(out_path, "w"))
  f:write(vim.fn.json_encode(results))
  f:close()
end

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

local function notified(pattern, from)
  return function()
    for i = from + 1, #results.notifications do
      if results.notifications[i].msg:match(pattern) then
        return true
      end
    end
    return false
  end
end

local function run()
  local shiro = require("shiro")
  shiro.setup({ cmd = server, settings = { approvals = "ask", sandbox = "off", model = "fake-model" } })
  -- vim.ui.select: record what is offered; pick the row holding SHIRO_PICK (else the first).
  local pick = nil
  vim.ui.select = function(items, opts, on_choice)
    local titles = {}
    for _, item in ipairs(items) do
      table.insert(titles, opts.format_item and opts.format_item(item) or tostring(item))
    end
    table.insert(results.asked, { kind = opts.kind, prompt = opts.prompt, items = titles })
    for i, item in ipairs(items) do
      if not pick or titles[i]:find(pick, 1, true) then
        return on_choice(item, i)
      end
    end
    on_choice(nil, nil)
  end
  vim.fn.confirm = function(text)
    table.insert(results.asked, { kind = "confirm", prompt = text })
    return 1
  end

  step("two sessions")
  vim.cmd("ShiroChat why is the invoice total off by a cent?")
  wait("the first turn", 15000, function() return shiro.state.turns_ended >= 1 end)
  results.first = shiro.state.session_id
  vim.cmd("ShiroNew")
  wait("the new session", 15000, function() return shiro.state.session_id ~= results.first end)
  vim.cmd("ShiroChat speed up the build")
  wait("the second turn", 15000, function() return shiro.state.turns_ended >= 2 end)
  results.second = shiro.state.session_id

  step("search")
  vim.cmd("ShiroSessions narwhal")
  wait("the resume", 15000, function() return shiro.state.session_id == results.first end)

  step("rename")
  local before = #results.notifications
  vim.cmd("ShiroRenameSession Invoice rounding")
  wait("the rename", 15000, notified("renamed", before))

  step("export")
  local buffers = #vim.api.nvim_list_bufs()
  vim.cmd("ShiroExport")
  wait("the export buffer", 15000, function() return #vim.api.nvim_list_bufs() > buffers end)
  results.exported = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  results.export_filetype = vim.bo.filetype

  step("delete")
  pick = "speed up the build"
  before = #results.notifications
  vim.cmd("ShiroDeleteSession")
  wait("the deletion", 15000, notified("deleted", before))
  results.files = vim.fn.glob(home .. "/sessions/*.json", false, true)
  step("done")
end

local ok, err = pcall(run)
if not ok then
  table.insert(results.errors, tostring(err))
end
write_results()
vim.cmd(ok and "qall!" or "cquit 1")
