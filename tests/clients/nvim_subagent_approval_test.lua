-- Headless Neovim: a `task` subagent's approval says who asks (clients/nvim/lua/shiro/approve.lua
-- A.request_text). Run by tests/clients/test_nvim_subagent_approval.py:
-- nvim --headless -i NONE -u tests/clients/nvim_subagent_approval_test.lua. Env as
-- tests/clients/nvim_chat_test.lua. The watchdog, the results file and the exit codes:
-- tests/clients/nvim_harness.lua.

local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/nvim_harness.lua")
  .start({ watchdog_ms = 180000, options = { columns = 160, lines = 40 }, results = { asked = {} } })
local results, step, wait, server = h.results, h.step, h.wait, h.server

local function run()
  local shiro = require("shiro")
  shiro.setup({ cmd = server, settings = { approvals = "ask", sandbox = "off", model = "fake-model" } })
  h.answer_select(function(title)
    return title == "Deny"
  end)

  step("chat")
  vim.cmd("ShiroChat what does the page say?")
  wait("the turn", 60000, function() return shiro.state.turns_ended >= 1 end)
  step("done")
end

h.run(run)
