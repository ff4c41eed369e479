-- Small read-only windows: the task list (docked above the chat transcript, a float beside it, or
-- a split) and scratch lists. The task list never covers the chat transcript.

local P = {}

local api = vim.api

local todos = { buf = nil, win = nil }

local function scratch_buf(name)
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_get_name(b) == name and api.nvim_buf_is_valid(b) then
      return b
    end
  end
  local buf = api.nvim_create_buf(false, true)
  pcall(api.nvim_buf_set_name, buf, name)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  return buf
end

local function set_lines(buf, lines)
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
end

local function width_of(lines)
  local w = 10
  for _, l in ipairs(lines) do
    w = math.max(w, vim.fn.strdisplaywidth(l))
  end
  return math.min(w, math.max(vim.o.columns - 6, 10))
end

--- The lines shown for a `shiro/todos` payload (or `shiro.todos` result).
function P.todo_lines(params)
  local rendered = params and params.rendered
  local lines
  if type(rendered) == "string" and rendered ~= "" then
    lines = vim.split(rendered, "\n", { plain = true })
  else
    lines = { "(no tasks)" }
  end
  if params and type(params.warnings) == "table" then
    for _, w in ipairs(params.warnings) do
      table.insert(lines, "! " .. tostring(w))
    end
  end
  return lines
end

function P.todos_visible()
  return todos.win ~= nil and api.nvim_win_is_valid(todos.win)
end

function P.todos_buf()
  return todos.buf
end

function P.todos_win()
  return P.todos_visible() and todos.win or nil
end

function P.close_todos()
  if P.todos_visible() then
    pcall(api.nvim_win_close, todos.win, true)
  end
  todos.win = nil
end

--- The chat buffer's window in this tab (not a float), if it is shown.
local function chat_win()
  local chat = require("shiro.chat")
  if not (chat.buf and api.nvim_buf_is_valid(chat.buf)) then
    return nil
  end
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(w) == chat.buf and api.nvim_win_get_config(w).relative == "" then
      return w
    end
  end
  return nil
end

--- Top right of the editor, or, when the chat is shown, top right of the space left of it (the
--- float then covers code, never the transcript).
local function float_config(lines)
  local right = vim.o.columns - 1
  local chat = chat_win()
  if chat then
    local col = api.nvim_win_get_position(chat)[2]
    if col > 0 then
      right = col - 1 -- the chat's left edge; the border is drawn inside this column
    end
  end
  return {
    relative = "editor",
    anchor = "NE",
    row = 1,
    col = right,
    width = math.min(width_of(lines), math.max(10, right - 2)),
    height = math.max(1, math.min(#lines, vim.o.lines - 4)),
    style = "minimal",
    border = "rounded",
    focusable = false,
    zindex = 45,
  }
end

local function plain_window(win)
  vim.wo[win].winfixheight = true
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].signcolumn = "no"
  vim.wo[win].foldenable = false
end

--- The docked list's height: its lines, but at most a third of the chat window.
local function dock_height(lines, chat)
  return math.max(1, math.min(#lines, math.floor(api.nvim_win_get_height(chat) / 3)))
end

--- Where the task list goes now: "dock" (a window above the chat's transcript, in its column),
--- "float" or "split". `dock` without a chat window shown is a float (nothing to cover then).
local function placement(layout)
  if layout == "split" or layout == "float" then
    return layout
  end
  return chat_win() and "dock" or "float"
end

--- Show (or refresh) the task list panel.
function P.show_todos(params)
  local layout = placement(require("shiro").config.todos.layout)
  local lines = P.todo_lines(params)
  if not (todos.buf and api.nvim_buf_is_valid(todos.buf)) then
    todos.buf = scratch_buf("shiro://todos")
    vim.keymap.set("n", "q", P.close_todos, { buffer = todos.buf, silent = true, desc = "shiro: close the task list" })
  end
  set_lines(todos.buf, lines)
  if P.todos_visible() then
    local floating = api.nvim_win_get_config(todos.win).relative ~= ""
    if floating and layout == "float" then
      api.nvim_win_set_config(todos.win, float_config(lines))
      return todos.win
    elseif not floating and layout == "split" then
      pcall(api.nvim_win_set_height, todos.win, math.max(1, #lines))
      return todos.win
    elseif not floating and layout == "dock" then
      pcall(api.nvim_win_set_height, todos.win, dock_height(lines, chat_win()))
      return todos.win
    end
    P.close_todos() -- the chat window came or went: place it anew
  end
  if layout == "dock" then
    local chat = chat_win()
    local previous = api.nvim_get_current_win()
    api.nvim_win_call(chat, function()
      vim.cmd("aboveleft " .. dock_height(lines, chat) .. "split")
      todos.win = api.nvim_get_current_win()
    end)
    api.nvim_win_set_buf(todos.win, todos.buf)
    plain_window(todos.win)
    if api.nvim_win_is_valid(previous) then
      api.nvim_set_current_win(previous)
    end
  elseif layout == "split" then
    local previous = api.nvim_get_current_win()
    vim.cmd("botright " .. math.max(1, #lines) .. "split")
    todos.win = api.nvim_get_current_win()
    api.nvim_win_set_buf(todos.win, todos.buf)
    plain_window(todos.win)
    if api.nvim_win_is_valid(previous) then
      api.nvim_set_current_win(previous)
    end
  else
    todos.win = api.nvim_open_win(todos.buf, false, float_config(lines))
  end
  return todos.win
end

--- A scratch list in a bottom split; `q` closes it. opts: `filetype`, `height` (default: its
--- lines, 3 to 15).
function P.scratch(name, lines, opts)
  opts = opts or {}
  local buf = scratch_buf(name)
  set_lines(buf, lines)
  if opts.filetype then
    vim.bo[buf].filetype = opts.filetype
  end
  vim.keymap.set("n", "q", "<cmd>close<CR>", { buffer = buf, silent = true })
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(w) == buf then
      api.nvim_set_current_win(w)
      return w
    end
  end
  vim.cmd("botright " .. (opts.height or math.max(3, math.min(#lines, 15))) .. "split")
  local win = api.nvim_get_current_win()
  api.nvim_win_set_buf(win, buf)
  return win
end

return P
