-- User commands. Defining them is cheap: each one loads the plugin only when it runs.

local M = {}

local function shiro()
  return require("shiro")
end

local commands = {
  { "ShiroChat", function(o)
    if o.range > 0 then shiro().select_lines(o.line1, o.line2) end
    shiro().chat_command(o.args)
  end, { nargs = "*", range = true, desc = "shiro: send a prompt (no prompt: open the chat buffer); with a range ('<,'>) the selection goes with it" } },
  { "ShiroAbort", function() shiro().abort() end, { desc = "shiro: abort the running turn and clear the queue" } },
  { "ShiroNew", function(o) shiro().new_session(o.bang) end, { bang = true, desc = "shiro: start a new session (! = private)" } },
  { "ShiroCompact", function(o) shiro().compact(o.args) end, { nargs = "*", desc = "shiro: compact the session [focus]" } },
  { "ShiroNotes", function() shiro().notes() end, { desc = "shiro: list the project notes (memory)" } },
  { "ShiroTodos", function() shiro().todos() end, { desc = "shiro: toggle the task list" } },
  { "ShiroSessions", function(o) require("shiro.sessions").list(o.args) end, { nargs = "*", desc = "shiro: pick a saved session to resume [words its text holds]" } },
  { "ShiroRenameSession", function(o) require("shiro.sessions").rename(o.args) end, { nargs = "*", desc = "shiro: rename this session [title]" } },
  { "ShiroExport", function() require("shiro.sessions").export() end, { desc = "shiro: this session as Markdown in a new buffer" } },
  { "ShiroDeleteSession", function(o) require("shiro.sessions").delete(o.args) end, { nargs = "?", desc = "shiro: delete a saved session [id or prefix] (asks first)" } },
  { "ShiroResume", function(o) shiro().resume(o.args) end, { nargs = "?", desc = "shiro: resume a session by id prefix (latest when empty)" } },
  { "ShiroRewind", function() shiro().rewind() end, { desc = "shiro: take files (and the conversation) back to before a turn" } },
  { "ShiroStatus", function() shiro().show_status() end, { desc = "shiro: show context use, tokens and cost" } },
  { "ShiroDiff", function(o) shiro().turn_diff(o.args) end, { nargs = "?", complete = function() return M.changed_files() end, desc = "shiro: what the last turn changed, as a diff [file]" } },
  { "ShiroUndo", function(o) shiro().undo(o.args) end, { nargs = "?", complete = function() return M.changed_files() end, desc = "shiro: undo a file (or pick: the whole turn) of the last turn's changes" } },
  { "ShiroPlan", function(o) local p = require("shiro.plan"); if o.bang then p.toggle() else p.plan(o.args) end end, { nargs = "*", bang = true, desc = "shiro: plan mode [prompt] (! switches plan/act): the model reads and plans, nothing is changed" } },
  { "ShiroAct", function(o) require("shiro.plan").act(o.args) end, { nargs = "?", complete = function() return require("shiro.plan").APPROVALS end, desc = "shiro: act mode [ask|auto-edit|auto]" } },
  { "ShiroStart", function(o) require("shiro.plan").start(o.args) end, { nargs = "?", complete = function() return require("shiro.plan").APPROVALS end, desc = "shiro: act mode [approvals], then carry out the plan" } },
  { "ShiroModel", function(o) require("shiro.model").command(o.args) end, { nargs = "?", complete = function() return { "setup", "default" } end, desc = "shiro: pick the model, set one [NAME|default], or set up the endpoint and key (setup)" } },
  { "ShiroAttachImage", function(o) shiro().attach_image(o.args) end, { nargs = 1, complete = "file", desc = "shiro: send an image (png, jpg, gif, webp) with the next prompt" } },
  { "ShiroPermissions", function() require("shiro.permissions").command() end, { desc = "shiro: the permission rules (pick one to remove it)" } },
  { "ShiroEffort", function(o) shiro().effort(o.args) end, { nargs = "?", complete = function() return shiro().EFFORTS end, desc = "shiro: show or set the reasoning effort" } },
}

--- `:Shiro {subcommand} [args]`: the same commands, e.g. `:Shiro effort high`.
local subcommands = {
  chat = "ShiroChat", abort = "ShiroAbort", new = "ShiroNew", compact = "ShiroCompact", notes = "ShiroNotes",
  todos = "ShiroTodos", sessions = "ShiroSessions", resume = "ShiroResume", rewind = "ShiroRewind",
  status = "ShiroStatus", diff = "ShiroDiff", undo = "ShiroUndo", effort = "ShiroEffort", permissions = "ShiroPermissions",
  plan = "ShiroPlan", act = "ShiroAct", start = "ShiroStart", model = "ShiroModel", image = "ShiroAttachImage",
  rename = "ShiroRenameSession", export = "ShiroExport", delete = "ShiroDeleteSession",
}

--- The paths the last turn with changes touched (completion for :ShiroDiff and :ShiroUndo).
function M.changed_files()
  local last = package.loaded["shiro"] and shiro().state.last_changes
  local out = {}
  for _, f in ipairs(last and last.files or {}) do
    table.insert(out, tostring(f.path))
  end
  return out
end

local function dispatch(o)
  local sub, rest = o.args:match("^%s*(%S+)%s*(.-)%s*$")
  if sub and sub:sub(1, 1) == "/" then -- a skill or custom command: a prompt the server expands
    shiro().chat(vim.trim(o.args))
    return
  end
  local target = sub and subcommands[sub]
  if not target then
    local names = vim.tbl_keys(subcommands)
    table.sort(names)
    vim.notify("shiro: :Shiro {" .. table.concat(names, "|") .. "} [args]", vim.log.levels.ERROR)
    return
  end
  vim.cmd(target .. (o.bang and "!" or "") .. (rest ~= "" and (" " .. rest) or ""))
end

local function complete(arglead, cmdline)
  local sub = cmdline:match("^%s*%S+%s+(%S+)%s")
  if sub and subcommands[sub] then
    return vim.fn.getcompletion(subcommands[sub] .. " " .. arglead, "cmdline")
  end
  if arglead:sub(1, 1) == "/" then
    return require("shiro.custom_commands").complete(arglead)
  end
  local names = {}
  for name in pairs(subcommands) do
    if name:sub(1, #arglead) == arglead then
      table.insert(names, name)
    end
  end
  table.sort(names)
  return names
end

table.insert(commands, { "Shiro", dispatch, { nargs = "+", bang = true, complete = complete, desc = "shiro: :Shiro {subcommand} [args]" } })

function M.define()
  for _, c in ipairs(commands) do
    vim.api.nvim_create_user_command(c[1], c[2], c[3])
  end
end

return M
