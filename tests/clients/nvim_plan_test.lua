-- Headless Neovim: plan mode through the shiro plugin against the real server and the fake provider.
-- Run by tests/clients/test_nvim_plan.py (same environment as nvim_chat_test.lua).
-- The watchdog, the results file and the exit codes: tests/clients/nvim_harness.lua.

local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/nvim_harness.lua")
  .start({ watchdog_ms = 120000 })
local results, step, wait, notified = h.results, h.step, h.wait, h.notified
local server, workspace = h.server, h.workspace

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

h.run(run)
