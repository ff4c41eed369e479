-- Headless Neovim: plan mode through the shiro plugin against the real server and the fake provider.
-- Run by tests/clients/test_nvim_plan.py (same environment as nvim_chat_test.lua).

local SLACK = 6
local WATCHDOG_MS = 120000
vim.defer_fn(function() vim.cmd("cquit 2") end, WATCHDOG_MS)

local out_path = os.getenv("SHIRO_NVIM_OUT")
local server = vim.fn.json_decode(os.getenv("SHIRO_NVIM_SERVER"))
local workspace = os.getenv("SHIRO_NVIM_WORKSPACE")
vim.opt.runtimepath:prepend(os.getenv("SHIRO_NVIM_PLUGIN"))

local results = { notifications = {}, errors = {}, steps = {} }
local function write_results()
  local f = assert(io.open(out_path, "w"))
  f:write(vim.fn.json_encode(results))
  f:close()
end
vim.defer_fn(function()
  table.insert(results.errors, "watchdog: timed out at step " .. tostring(results.steps[#results.steps]))
  pcall(write_results)
  vim.cmd("cquit 2")
end, WATCHDOG_MS - 1000)
vim.notify = function(msg, level)
  table.insert(results.notifications, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end
local function step(name) table.insert(results.steps, name) end
local function wait(what, ms, cond)
  if not vim.wait(ms * SLACK, cond, 20) then
    error("timed out waiting for " .. what)
  end
end
local function notified(pattern)
  for _, n in ipairs(results.notifications) do
    if n.msg:find(pattern, 1, true) then
      return true
    end
  end
  return false
end

local function run()
  local shiro = require("shiro")
  shiro.setup({ cmd = server, settings = { approvals = "ask", model = "fake-model" } })
  results.commands = vim.fn.exists(":ShiroPlan") == 2 and vim.fn.exists(":ShiroAct") == 2 and vim.fn.exists(":ShiroStart") == 2

  step("plan")
  vim.cmd("ShiroPlan add a file")
  wait("plan mode in the status", 5000, function() return shiro.state.status and shiro.state.status.mode == "plan" end)
  wait("the plan turn", 10000, function() return shiro.state.turns_ended >= 1 end)
  wait("the plan-ready notice", 3000, function() return notified("plan ready") end)
  results.statusline = (shiro.statusline())
  results.turn_end_1 = shiro.state.last_turn_end
  results.exists_after_plan = vim.fn.filereadable(workspace .. "/new.txt") == 1
  results.chat_lines_1 = require("shiro.chat").lines()

  step("toggle")
  vim.cmd("ShiroPlan!")
  wait("act mode", 5000, function() return shiro.state.status.mode == "act" end)
  vim.cmd("Shiro plan")
  wait("plan mode again", 5000, function() return shiro.state.status.mode == "plan" end)
  vim.cmd("ShiroAct yolo")
  results.bad_approvals = notified("use one of ask, auto-edit, auto")

  step("start")
  vim.cmd("ShiroStart auto-edit")
  wait("act mode with auto-edit", 5000, function() return shiro.state.status.mode == "act" end)
  wait("the start turn", 10000, function() return shiro.state.turns_ended >= 2 end)
  results.statusline_act = (shiro.statusline())
  results.turn_end_2 = shiro.state.last_turn_end
  results.new_txt = vim.fn.readfile(workspace .. "/new.txt")
  step("done")
end

local ok, err = pcall(run)
if not ok then
  table.insert(results.errors, tostring(err))
end
write_results()
vim.cmd(ok and "qall!" or "cquit 1")
