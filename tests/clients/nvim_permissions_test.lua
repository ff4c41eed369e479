-- Headless Neovim: permission rules and notifications (issue 39). Run by
-- tests/clients/test_nvim_permissions.py: nvim --headless -i NONE -u tests/clients/nvim_permissions_test.lua
-- Env as tests/clients/nvim_chat_test.lua, and SHIRO_NEKO_HOME. The watchdog, the results file
-- and the exit codes: tests/clients/nvim_harness.lua.

local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/nvim_harness.lua")
  .start({ watchdog_ms = 180000, options = { columns = 160, lines = 40 }, results = { asked = {} } })
local results, step, wait, server = h.results, h.step, h.wait, h.server
local home = h.env("SHIRO_NEKO_HOME")

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
  h.answer_select(function(title, opts, titles)
    return title == (opts.kind == "shiro_approval" and "Always allow in this folder" or titles[1])
  end)
  h.confirm_yes()

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

h.run(run)
