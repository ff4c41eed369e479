-- Headless Neovim: :ShiroModel (issue 39) against the real server and the fake provider.
-- Run by tests/clients/test_nvim_model.py, with the environment of tests/clients/test_nvim.py's _run.
local SLACK = 6
vim.defer_fn(function() vim.cmd("cquit 2") end, 120000)

local out_path = os.getenv("SHIRO_NVIM_OUT")
vim.opt.runtimepath:prepend(os.getenv("SHIRO_NVIM_PLUGIN"))
local server = vim.fn.json_decode(os.getenv("SHIRO_NVIM_SERVER"))
local results = { notifications = {}, errors = {}, steps = {}, picked_from = {} }

vim.notify = function(msg, level)
  table.insert(results.notifications, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end

local function wait(what, ms, cond)
  if not vim.wait(ms * SLACK, cond, 20) then
    error("timed out waiting for " .. what)
  end
end

local function notified(text)
  for _, n in ipairs(results.notifications) do
    if n.msg:find(text, 1, true) then
      return true
    end
  end
  return false
end

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
  table.insert(results.steps, "pick")
  vim.cmd("ShiroModel")
  wait("the model set", 10000, function() return notified("model fake-model-large") end)
  table.insert(results.steps, "chat")
  vim.cmd("ShiroChat hello")
  wait("the turn's end", 10000, function() return shiro.state.turns_ended >= 1 end)
  table.insert(results.steps, "by name")
  vim.cmd("ShiroModel default")
  wait("the model back", 10000, function() return notified("model fake-model (from") end)
  results.status_model = shiro.state.status and shiro.state.status.model
  local id = shiro.state.client_id
  shiro.stop()
  wait("the server to exit", 5000, function() return vim.lsp.get_client_by_id(id) == nil or shiro.state.client_id == nil end)
end

vim.api.nvim_create_autocmd("VimEnter", {
  once = true,
  callback = function()
    local ok, err = xpcall(run, debug.traceback)
    if not ok then
      table.insert(results.errors, tostring(err))
    end
    local f = assert(io.open(out_path, "w"))
    f:write(vim.fn.json_encode(results))
    f:close()
    vim.cmd(ok and "qall!" or "cquit 1")
  end,
})
