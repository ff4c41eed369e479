-- The model, its endpoint and key (issue 39): `:ShiroModel` picks from shiro.models with
-- vim.ui.select, `:ShiroModel NAME` (or `default`) sets it for this session from the next request,
-- `:ShiroModel setup` ("Set up model") asks for the endpoint and the key (inputsecret) and hands
-- them to the running server with shiro.setCredentials: in its memory only, for this Neovim's
-- server (docs/neovim.md says where to keep a key for good).

local M = {}

M.SET_UP_MODEL = "Set up model"

local function shiro()
  return require("shiro")
end

local function wire()
  return require("shiro.protocol")
end

--- shiro.setModel {model}.
function M.set(name)
  shiro().execute(wire().commands.setModel, { model = name }, function(err, result)
    if err or not result then
      return
    end
    local effort = shiro()._is_nil(result.effort) and "" or (", effort " .. tostring(result.effort))
    shiro()._notify(string.format("model %s%s (from the next request)", tostring(result.model), effort))
  end)
end

--- The picker: the endpoint's models, then the settings', then "Set up model…".
function M.pick()
  shiro().execute(wire().commands.models, {}, function(err, result)
    if err or not result then
      return
    end
    local items = {}
    for _, m in ipairs(result.models or {}) do
      table.insert(items, m)
    end
    table.insert(items, { id = "setup", source = "setup" })
    local prompt = "Model"
    if not shiro()._is_nil(result.error) and result.error then
      prompt = "Model (" .. tostring(result.error) .. ")"
    end
    vim.ui.select(items, {
      prompt = prompt,
      format_item = function(m)
        if m.source == "setup" then
          return M.SET_UP_MODEL .. ": endpoint and key…"
        end
        local mark = m.id == result.current and "* " or "  "
        return mark .. tostring(m.id) .. (m.source == "settings" and "  (from settings)" or "")
      end,
    }, function(choice)
      if not choice then
        return
      elseif choice.source == "setup" then
        M.setup()
      else
        M.set(choice.id)
      end
    end)
  end)
end

--- "Set up model": the endpoint and the key, handed to the running server (memory only).
function M.setup()
  local url = vim.fn.input({ prompt = "Endpoint (empty: keep it; e.g. http://127.0.0.1:11434/v1): ", cancelreturn = "\27" })
  if url == "\27" then
    return
  end
  local key = vim.fn.inputsecret("API key (hidden; empty: keep it): ")
  local arg = {}
  if vim.trim(url) ~= "" then
    arg.baseUrl = vim.trim(url)
  end
  if vim.trim(key) ~= "" then
    arg.apiKey = vim.trim(key)
  end
  if next(arg) == nil then
    return
  end
  shiro().execute(wire().commands.setCredentials, arg, function(err, result)
    if err or not result then
      return
    end
    shiro()._notify(string.format("endpoint %s, model %s: set up for this server", tostring(result.baseUrl), tostring(result.model)))
    M.pick()
  end)
end

--- `:ShiroModel [NAME|default|setup]`.
function M.command(arg)
  local word = vim.trim(arg or "")
  if word == "" then
    M.pick()
  elseif word == "setup" then
    M.setup()
  else
    M.set(word)
  end
end

return M
