-- Small read-only windows: the task list (a floating window or a split) and scratch lists.

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

local function float_config(lines)
  return {
    relative = "editor",
    anchor = "NE",
    row = 1,
    col = vim.o.columns - 1,
    width = width_of(lines),
    height = math.max(1, math.min(#lines, vim.o.lines - 4)),
    style = "minimal",
    border = "rounded",
    focusable = false,
    zindex = 45,
  }
end

--- Show (or refresh) the task list panel.
function P.show_todos(params)
  local layout = require("shiro").config.todos.layout
  local lines = P.todo_lines(params)
  if not (todos.buf and api.nvim_buf_is_valid(todos.buf)) then
    todos.buf = scratch_buf("shiro://todos")
  end
  set_lines(todos.buf, lines)
  if P.todos_visible() then
    if api.nvim_win_get_config(todos.win).relative ~= "" then
      api.nvim_win_set_config(todos.win, float_config(lines))
    elseif layout == "split" then
      pcall(api.nvim_win_set_height, todos.win, math.max(1, #lines))
    end
    return todos.win
  end
  if layout == "split" then
    local previous = api.nvim_get_current_win()
    vim.cmd("botright " .. math.max(1, #lines) .. "split")
    todos.win = api.nvim_get_current_win()
    api.nvim_win_set_buf(todos.win, todos.buf)
    vim.wo[todos.win].winfixheight = true
    vim.wo[todos.win].number = false
    vim.wo[todos.win].relativenumber = false
    if api.nvim_win_is_valid(previous) then
      api.nvim_set_current_win(previous)
    end
  else
    todos.win = api.nvim_open_win(todos.buf, false, float_config(lines))
  end
  return todos.win
end

--- A scratch list in a bottom split; `q` closes it.
function P.scratch(name, lines)
  local buf = scratch_buf(name)
  set_lines(buf, lines)
  vim.keymap.set("n", "q", "<cmd>close<CR>", { buffer = buf, silent = true })
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(w) == buf then
      api.nvim_set_current_win(w)
      return w
    end
  end
  vim.cmd("botright " .. math.max(3, math.min(#lines, 15)) .. "split")
  local win = api.nvim_get_current_win()
  api.nvim_win_set_buf(win, buf)
  return win
end

return P
