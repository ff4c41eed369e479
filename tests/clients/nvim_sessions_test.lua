-- Headless Neovim: saved sessions (issue 40): search, resume, rename, export, delete. Run by
-- tests/clients/test_nvim_sessions.py: nvim --headless -i NONE -u tests/clients/nvim_sessions_test.lua
-- Env as tests/clients/nvim_chat_test.lua, and SHIRO_NEKO_HOME. The watchdog, the results file
-- and the exit codes: tests/clients/nvim_harness.lua.

local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/nvim_harness.lua")
  .start({ watchdog_ms = 180000, options = { columns = 160, lines = 40 }, results = { asked = {} } })
local results, step, wait, server = h.results, h.step, h.wait, h.server
local home = h.env("SHIRO_NEKO_HOME")

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
  h.answer_select(function(title) return not pick or title:find(pick, 1, true) end)
  h.confirm_yes()

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

h.run(run)
