-- What every headless Neovim test script (tests/clients/nvim_*_test.lua) shares: the watchdog, the
-- environment, the results table and its JSON file, the notify capture, step/wait, and the run.
-- A script loads it from its own folder, then keeps only its scenario:
--   local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/nvim_harness.lua")
--     .start({ watchdog_ms = 240000, options = { columns = 120, lines = 40 } })
-- Exit 0 when the script ran to the end (pytest judges the JSON), 1 on a Lua error or a missing
-- environment variable, 2 on timeout.

local M = {}

-- Every wait is for a condition, so a generous deadline costs a passing run nothing; a machine
-- shared by many jobs may take many seconds to start the server or stream a turn.
local SLACK = 6

--- An environment variable the pytest file sets; a missing one ends Neovim with exit code 1.
function M.env(name)
  local value = os.getenv(name)
  if not value or value == "" then
    io.stderr:write("missing environment variable " .. name .. "\n")
    vim.cmd("cquit 1")
  end
  return value
end

local function write_results()
  local f = assert(io.open(M.out_path, "w"))
  f:write(vim.fn.json_encode(M.results))
  f:close()
end

--- Arms the watchdog, reads the environment, loads the plugin and captures vim.notify.
--- opts.watchdog_ms: the whole run's deadline (exit 2); opts.options: vim.o values to set
--- (the screen size, 'hidden'), none when absent; opts.results: more fields the results start with.
function M.start(opts)
  local watchdog_ms = opts.watchdog_ms
  -- the watchdog first: nvim must exit whatever happens below
  vim.defer_fn(function() vim.cmd("cquit 2") end, watchdog_ms)

  M.out_path = M.env("SHIRO_NVIM_OUT")
  M.server = vim.fn.json_decode(M.env("SHIRO_NVIM_SERVER"))
  M.workspace = M.env("SHIRO_NVIM_WORKSPACE")
  vim.opt.runtimepath:prepend(M.env("SHIRO_NVIM_PLUGIN"))
  for name, value in pairs(opts.options or {}) do
    vim.o[name] = value
  end

  local v = vim.version()
  M.results = vim.tbl_extend("error", {
    nvim_version = string.format("%d.%d.%d", v.major, v.minor, v.patch),
    notifications = {},
    errors = {},
    steps = {},
  }, opts.results or {})

  -- the watchdog again, now with something to report (fires just before the first one)
  vim.defer_fn(function()
    table.insert(M.results.errors, "watchdog: timed out at step " .. tostring(M.results.steps[#M.results.steps]))
    pcall(write_results)
    vim.cmd("cquit 2")
  end, watchdog_ms - 1000)

  vim.notify = function(msg, level)
    table.insert(M.results.notifications, { msg = tostring(msg), level = level or vim.log.levels.INFO })
  end
  return M
end

--- Names the step the run is at (the watchdog reports the last one).
function M.step(name)
  table.insert(M.results.steps, name)
end

--- Waits for cond, at most ms (times SLACK); a Lua error naming `what` when it never holds.
function M.wait(what, ms, cond)
  if not vim.wait(ms * SLACK, cond, 20) then
    error("timed out waiting for " .. what .. " (" .. ms * SLACK .. " ms)")
  end
end

--- Whether a notification after the first `from` (0 when absent) holds `text`.
function M.notified(text, from)
  for i = (from or 0) + 1, #M.results.notifications do
    if M.results.notifications[i].msg:find(text, 1, true) then
      return true
    end
  end
  return false
end

--- The rows vim.ui.select shows for items, as a user sees them.
function M.titles(items, opts)
  local titles = {}
  for _, item in ipairs(items) do
    table.insert(titles, opts.format_item and opts.format_item(item) or tostring(item))
  end
  return titles
end

--- Answers vim.ui.select with the first row for which choose(title, opts, titles) holds (nothing
--- when none does), recorded in results.asked (a results field the script starts with).
function M.answer_select(choose)
  vim.ui.select = function(items, opts, on_choice)
    local titles = M.titles(items, opts)
    table.insert(M.results.asked, { kind = opts.kind, prompt = opts.prompt, items = titles })
    for i, item in ipairs(items) do
      if choose(titles[i], opts, titles) then
        return on_choice(item, i)
      end
    end
    on_choice(nil, nil)
  end
end

--- Answers every vim.fn.confirm dialog with its first choice, recorded in results.asked (a
--- results field the script starts with).
function M.confirm_yes()
  vim.fn.confirm = function(text)
    table.insert(M.results.asked, { kind = "confirm", prompt = text })
    return 1
  end
end

--- Stops the plugin's server and waits for it to exit.
function M.stop(shiro)
  local id = shiro.state.client_id
  shiro.stop()
  M.wait("the server to exit", 5000, function() return vim.lsp.get_client_by_id(id) == nil or shiro.state.client_id == nil end)
end

local function finish(scenario)
  local ok, err = xpcall(scenario, debug.traceback)
  if not ok then
    table.insert(M.results.errors, tostring(err))
  end
  M.results.messages = vim.fn.execute("messages")
  write_results()
  vim.cmd(ok and "qall!" or "cquit 1")
end

--- Runs the scenario, writes the results and exits Neovim. opts.at_vim_enter: after startup (the
--- plugin/ files sourced) rather than at once, while the -u script is still being read.
function M.run(scenario, opts)
  if opts and opts.at_vim_enter then
    vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function() finish(scenario) end })
  else
    finish(scenario)
  end
end

return M
