-- Headless Neovim: permission rules and notifications (issue 39). Run by
-- tests/clients/test_nvim_permissions.py: nvim --headless -i NONE -u tests/clients/nvim_permissions_test.lua
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

local function read(path)
  local f = io.open(path, "r")
  if not f then
    return nil
  end
  local text = f:read("*a")
  f:close()
  return text
end

local function run()
  local shiro = require("shiro")
  shiro.setup({ cmd = server, settings = { approvals = "ask", sandbox = "off", model = "fake-model", notifyAfterSeconds = 0 } })
  vim.ui.select = function(items, opts, on_choice)
    local titles = {}
    for _, item in ipairs(items) do
      table.insert(titles, opts.format_item and opts.format_item(item) or tostring(item))
    end
    table.insert(results.asked, { kind = opts.kind, prompt = opts.prompt, items = titles })
    local want = opts.kind == "shiro_approval" and "Always allow in this folder" or titles[1]
    for i, item in ipairs(items) do
      if titles[i] == want then
        return on_choice(item, i)
      end
    end
    on_choice(nil, nil)
  end
  vim.fn.confirm = function(text)
    table.insert(results.asked, { kind = "confirm", prompt = text })
    return 1
  end

  step("chat")
  vim.cmd("ShiroChat run it")
  wait("the turn", 15000, function() return shiro.state.turns_ended >= 1 end)
  results.saved_after_turn = read(home .. "/permissions.json")

  step("permissions")
  local before = #results.notifications
  vim.cmd("ShiroPermissions")
  wait("the removal", 15000, function()
    for i = before + 1, #results.notifications do
      if results.notifications[i].msg:match("removed") then
        return true
      end
    end
    return false
  end)
  results.saved_after_remove = read(home .. "/permissions.json")
  step("done")
end

local ok, err = pcall(run)
if not ok then
  table.insert(results.errors, tostring(err))
end
write_results()
vim.cmd(ok and "qall!" or "cquit 1")
