-- User commands. Defining them is cheap: each one loads the plugin only when it runs.

local M = {}

local function shiro()
  return require("shiro")
end

local commands = {
  { "ShiroChat", function(o) shiro().chat_command(o.args) end, { nargs = "*", desc = "shiro: send a prompt (no prompt: open the chat buffer)" } },
  { "ShiroAbort", function() shiro().abort() end, { desc = "shiro: abort the running turn and clear the queue" } },
  { "ShiroNew", function(o) shiro().new_session(o.bang) end, { bang = true, desc = "shiro: start a new session (! = private)" } },
  { "ShiroCompact", function(o) shiro().compact(o.args) end, { nargs = "*", desc = "shiro: compact the session [focus]" } },
  { "ShiroNotes", function() shiro().notes() end, { desc = "shiro: list the project notes (memory)" } },
  { "ShiroTodos", function() shiro().todos() end, { desc = "shiro: toggle the task list" } },
  { "ShiroSessions", function() shiro().sessions() end, { desc = "shiro: pick a saved session to resume" } },
  { "ShiroResume", function(o) shiro().resume(o.args) end, { nargs = "?", desc = "shiro: resume a session by id prefix (latest when empty)" } },
  { "ShiroRewind", function() shiro().rewind() end, { desc = "shiro: take files (and the conversation) back to before a turn" } },
  { "ShiroStatus", function() shiro().show_status() end, { desc = "shiro: show context use, tokens and cost" } },
}

function M.define()
  for _, c in ipairs(commands) do
    vim.api.nvim_create_user_command(c[1], c[2], c[3])
  end
end

return M
