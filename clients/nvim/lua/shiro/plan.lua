-- Plan mode (issue 39): :ShiroPlan [prompt], :ShiroAct [approvals], :ShiroStart [approvals], and a
-- notice after a completed plan-mode turn. The mode is the server's (shiro.setMode,
-- shiro/status.mode); the statusline shows it (init.lua M.statusline).

local M = {}

M.START_PROMPT = "Carry out the plan."
M.APPROVALS = { "ask", "auto-edit", "auto" }
M.READY = "plan ready: :ShiroStart carries it out (approvals as they are), :ShiroStart auto-edit lets edits run unasked"

local function shiro()
  return require("shiro")
end

local function wire()
  return require("shiro.protocol")
end

--- The approvals word of :ShiroAct / :ShiroStart, or nil; false (and a message) when it is not one.
local function approvals(arg)
  local word = vim.trim(arg or "")
  if word == "" then
    return nil
  end
  if not vim.tbl_contains(M.APPROVALS, word) then
    shiro()._notify("use one of " .. table.concat(M.APPROVALS, ", ") .. " (or nothing: as they are)", vim.log.levels.ERROR)
    return false
  end
  return word
end

--- shiro.setMode; then(result) when it answered.
function M.set(mode, approval, after)
  local arg = { mode = mode }
  if approval then
    arg.approvals = approval
  end
  shiro().execute(wire().commands.setMode, arg, function(err, result)
    if err or not result then
      return
    end
    if result.mode == "plan" then
      shiro()._notify("plan mode: the model reads and plans; nothing is changed (:ShiroAct to leave)")
    else
      shiro()._notify("act mode: approvals " .. tostring(result.approvals))
    end
    if after then
      after(result)
    end
  end)
end

--- `:ShiroPlan [prompt]`: plan mode, and the prompt sent in it.
function M.plan(prompt)
  M.set("plan", nil, function()
    if prompt and not prompt:match("^%s*$") then
      shiro().chat(prompt)
    end
  end)
end

--- `:ShiroAct [ask|auto-edit|auto]`.
function M.act(arg)
  local approval = approvals(arg)
  if approval ~= false then
    M.set("act", approval)
  end
end

--- `:ShiroStart [ask|auto-edit|auto]`: act mode, then the plan carried out.
function M.start(arg)
  local approval = approvals(arg)
  if approval ~= false then
    M.set("act", approval, function()
      shiro().chat(M.START_PROMPT)
    end)
  end
end

--- `:ShiroPlan!`: plan <-> act.
function M.toggle()
  local s = shiro().state.status
  M.set((type(s) == "table" and s.mode == "plan") and "act" or "plan")
end

--- From init.lua's shiro/event handler: the Start offer after a completed plan-mode turn.
function M.on_event(params)
  local s = shiro().state.status
  if params.type == wire().events.turn_end and params.status == "completed" and type(s) == "table" and s.mode == "plan" then
    shiro()._notify(M.READY)
  end
end

return M
