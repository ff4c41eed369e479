-- Saved sessions (issue 40): `:ShiroSessions [query]` lists this workspace's sessions (with words:
-- those whose text holds them, the server's full-text search) in vim.ui.select with each one's
-- short id (the shortest unique prefix) and the matched passage, and resumes the one picked;
-- `:ShiroRenameSession [title]`, `:ShiroExport` (the session as Markdown in a new buffer) and
-- `:ShiroDeleteSession [id]` (after a confirm; the server refuses one open in another window).

local M = {}

local function shiro()
  return require("shiro")
end

local function wire()
  return require("shiro.protocol")
end

local function short(s)
  return tostring(s.shortId ~= nil and s.shortId ~= vim.NIL and s.shortId or tostring(s.id):sub(1, 8))
end

local function one_line(text)
  return (tostring(text or ""):gsub("%s+", " "))
end

--- The picker's rows: short id, title, then the passage that matched (searching) or the size.
function M.format(s)
  local extra = (s.snippet ~= nil and s.snippet ~= vim.NIL) and ("  — " .. one_line(s.snippet))
    or string.format("  (%s messages, %s)", tostring(s.messageCount), tostring(s.updatedAt or ""))
  return string.format("%s  %s%s", short(s), one_line(s.title ~= "" and s.title or "(untitled)"), extra)
end

--- `:ShiroSessions [query]`.
function M.list(query)
  local arg = { limit = 30 }
  if query and not query:match("^%s*$") then
    arg.query = query
  end
  shiro().execute(wire().commands.sessions, arg, function(err, result)
    if err or not result then
      return
    end
    local sessions = result.sessions or {}
    if #sessions == 0 then
      shiro()._notify(arg.query and ("no session mentions " .. arg.query) or "no saved sessions in this workspace")
      return
    end
    vim.ui.select(sessions, {
      prompt = arg.query and ("Sessions mentioning " .. arg.query) or "Resume a shiro session",
      kind = "shiro_sessions",
      format_item = M.format,
    }, function(choice)
      if choice then
        shiro().resume(choice.id)
      end
    end)
  end)
end

local function current()
  local id = shiro().state.session_id
  if not id or id == vim.NIL then
    shiro()._notify("no session yet: send a prompt first", vim.log.levels.WARN)
    return nil
  end
  return id
end

--- `:ShiroRenameSession [title]`: this session; no title asks for one.
function M.rename(title)
  local id = current()
  if not id then
    return
  end
  local function send(t)
    if not t or t:match("^%s*$") then
      return
    end
    shiro().execute(wire().commands.renameSession, { id = id, title = t }, function(err, result)
      if not err and result then
        shiro()._notify("renamed: " .. tostring(result.title))
      end
    end)
  end
  if title and not title:match("^%s*$") then
    send(title)
  else
    vim.ui.input({ prompt = "Session title: " }, send)
  end
end

--- `:ShiroExport`: this session as Markdown in a new buffer (`:w file.md` keeps it).
function M.export()
  local id = current()
  if not id then
    return
  end
  shiro().execute(wire().commands.exportSession, { id = id, format = "markdown" }, function(err, result)
    if err or not result then
      return
    end
    vim.cmd("new")
    local buf = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(tostring(result.text or ""), "\n", { plain = true }))
    vim.bo[buf].filetype = "markdown"
    vim.bo[buf].modified = false
  end)
end

--- `:ShiroDeleteSession [id or prefix]`: that session (no id: pick one), after a confirm.
function M.delete(prefix)
  local function confirm_and_delete(id, label)
    if vim.fn.confirm("Delete the session " .. label .. "? Its transcript and checkpoints go.", "&Delete\n&Cancel", 2) ~= 1 then
      return
    end
    shiro().execute(wire().commands.deleteSession, { id = id }, function(err, result)
      if not err and result then
        shiro()._notify(result.deleted and ("deleted " .. label) or (label .. " was already gone"))
      end
    end)
  end
  if prefix and not prefix:match("^%s*$") then
    return confirm_and_delete(vim.trim(prefix), vim.trim(prefix))
  end
  shiro().execute(wire().commands.sessions, { limit = 30 }, function(err, result)
    if err or not result or #(result.sessions or {}) == 0 then
      return
    end
    vim.ui.select(result.sessions, { prompt = "Delete a shiro session", kind = "shiro_delete_session", format_item = M.format },
      function(choice)
        if choice then
          confirm_and_delete(choice.id, short(choice) .. ' "' .. one_line(choice.title) .. '"')
        end
      end)
  end)
end

return M
