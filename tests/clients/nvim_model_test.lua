-- Headless Neovim: :ShiroModel (issue 39) against the real server and the fake provider.
-- Run by tests/clients/test_nvim_model.py, with the environment of tests/clients/test_nvim.py's _run.
-- The watchdog, the results file and the exit codes: tests/clients/nvim_harness.lua.

local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/nvim_harness.lua")
  .start({ watchdog_ms = 120000, results = { picked_from = {} } })
local results, wait, notified = h.results, h.wait, h.notified
local server = h.server

local function run()
  local shiro = require("shiro")
  shiro.setup({ cmd = server, settings = { model = "fake-model" } })
  -- the picker: what :ShiroModel offers, and the large model chosen
  vim.ui.select = function(items, opts, on_choice)
    for _, item in ipairs(items) do
      table.insert(results.picked_from, opts.format_item(item))
    end
    results.prompt = opts.prompt
    for i, item in ipairs(items) do
      if item.id == "fake-model-large" then
        return on_choice(item, i)
      end
    end
    on_choice(nil, nil)
  end
  h.step("pick")
  vim.cmd("ShiroModel")
  wait("the model set", 10000, function() return notified("model fake-model-large") end)
  h.step("chat")
  vim.cmd("ShiroChat hello")
  wait("the turn's end", 10000, function() return shiro.state.turns_ended >= 1 end)
  h.step("by name")
  vim.cmd("ShiroModel default")
  wait("the model back", 10000, function() return notified("model fake-model (from") end)
  results.status_model = shiro.state.status and shiro.state.status.model
  h.stop(shiro)
end

h.run(run, { at_vim_enter = true })
