-- Skills and custom commands (issue 40, docs/extending.md): `shiro.commands` lists them; `:Shiro
-- /name args` sends `/name args` as a prompt, which the server expands for the model, and
-- `:Shiro /` completes their names (the list is asked for when shiro starts and after each turn).

local M = {}

--- name (without the slash) -> description, of the skills and custom commands last listed.
M.names = {}

local function shiro()
  return require("shiro")
end

--- Ask the server again (asynchronously; completion shows what the last answer said).
function M.refresh()
  shiro().execute(require("shiro.protocol").commands.commands, {}, function(err, result)
    if err or type(result) ~= "table" then
      return
    end
    local names = {}
    for _, c in ipairs(result.commands or {}) do
      if c.source ~= "builtin" then
        names[tostring(c.name)] = tostring(c.description or "")
      end
    end
    M.names = names
    M.answered = true
  end)
end

--- Completion of `/…` in `:Shiro`.
function M.complete(arglead)
  if not M.answered then -- the first completion: wait (briefly) for the server's list
    M.refresh()
    vim.wait(2000, function() return M.answered end, 20)
  end
  local out = {}
  for name in pairs(M.names) do
    local slashed = "/" .. name
    if slashed:sub(1, #arglead) == arglead then
      table.insert(out, slashed)
    end
  end
  table.sort(out)
  return out
end

return M
