-- Permission rules and notifications in Neovim (issue 39, docs/neovim.md): where an "Always
-- allow" rule goes (`ApproveResult.scope`), `:ShiroPermissions` (list; pick one to remove it) and
-- `vim.notify` when a turn longer than `notifyAfterSeconds` ends or an approval waits while
-- Neovim has lost focus (FocusLost / FocusGained).

local P = {}

local uv = vim.uv or vim.loop

local state = { focused = nil, started = {}, count = 0 }
local MAX_TURNS = 64 -- turn starts remembered (one whose end never came is dropped)
local DEFAULT_AFTER = 30

local function shiro()
  return require("shiro")
end

--- The approval menu's "always" entries: the session first.
function P.always_items()
  return {
    { title = "Always allow (this session)", decision = "always" },
    { title = "Always allow in this folder", decision = "always", scope = "workspace" },
    { title = "Always allow for me (everywhere)", decision = "always", scope = "user" },
  }
end

--- The lines of a `shiro.permissions` answer, one per rule (also the menu's items).
function P.lines(result)
  local out = {}
  for _, r in ipairs(type(result) == "table" and type(result.rules) == "table" and result.rules or {}) do
    table.insert(out, string.format("%-5s  %s  (%s)", tostring(r.decision), tostring(r.rule), tostring(r.scope)))
  end
  return out
end

--- `:ShiroPermissions`: the rules in vim.ui.select; the one picked is removed after a yes.
function P.command()
  local wire = require("shiro.protocol")
  shiro().execute(wire.commands.permissions, {}, function(err, result)
    if err or type(result) ~= "table" then
      return
    end
    local rules = type(result.rules) == "table" and result.rules or {}
    if #rules == 0 then
      vim.notify("shiro: no permission rules (an approval's \"Always allow\" adds one)")
      return
    end
    local lines = P.lines(result)
    vim.ui.select(rules, {
      prompt = "Permission rules (pick one to remove it)",
      kind = "shiro_permissions",
      format_item = function(r)
        for i, rule in ipairs(rules) do
          if rule == r then
            return lines[i]
          end
        end
        return tostring(r.rule)
      end,
    }, function(rule)
      if not rule then
        return
      end
      local yes = vim.fn.confirm(string.format("Remove the %s rule %s (%s)?", rule.decision, rule.rule, rule.scope), "&Remove\n&Keep", 2)
      if yes ~= 1 then
        return
      end
      local args = { rule = rule.rule, scope = rule.scope, decision = rule.decision }
      shiro().execute(wire.commands.removePermission, args, function(e, answer)
        if not e and type(answer) == "table" then
          vim.notify(answer.removed and ("shiro: removed " .. tostring(rule.rule)) or ("shiro: " .. tostring(rule.rule) .. " was not there any more"))
        end
      end)
    end)
  end)
end

local function after_seconds()
  local settings = shiro().config.settings
  local value = type(settings) == "table" and settings.notifyAfterSeconds or nil
  return type(value) == "number" and value >= 0 and value or DEFAULT_AFTER
end

--- A `shiro/event`: a turn's start and end (its length decides the notification).
function P.on_event(params)
  local events = require("shiro.protocol").events
  if params.type == events.turn_start then
    state.started[params.turnId] = uv.now()
    state.count = state.count + 1
    if state.count > MAX_TURNS then
      state.started, state.count = {}, 0
    end
  elseif params.type == events.turn_end then
    local at = state.started[params.turnId]
    state.started[params.turnId] = nil
    if at and (uv.now() - at) / 1000 >= after_seconds() and state.focused ~= true then
      local how = params.status == "completed" and "finished" or params.status == "aborted" and "was aborted" or "ended with an error"
      vim.notify(string.format("shiro: the turn %s (%d s)", how, math.floor((uv.now() - at) / 1000)), vim.log.levels.INFO)
    end
  end
end

--- An approval opened: told when Neovim is known to have lost focus (the menu itself is on screen).
function P.on_approval(title)
  if state.focused == false then
    vim.notify("shiro: waiting for your approval: " .. tostring(title), vim.log.levels.WARN)
  end
end

function P.watch_focus()
  local group = vim.api.nvim_create_augroup("ShiroFocus", { clear = true })
  vim.api.nvim_create_autocmd("FocusGained", { group = group, callback = function() state.focused = true end })
  vim.api.nvim_create_autocmd("FocusLost", { group = group, callback = function() state.focused = false end })
end

P._state = state
return P
