-- The chat buffer `shiro://chat`: a transcript on top, an input area below it. An extmark marks
-- where the input starts; everything the server streams is written above that mark, so typing a
-- prompt while a turn streams is never disturbed.

local C = {}

local api = vim.api
local NAME = "shiro://chat"
local E = require("shiro.protocol").events
local ns = api.nvim_create_namespace("shiro_chat")

C.buf = nil
C.mark = nil
C.open_kind = nil -- "text" | "reasoning": the last transcript line is streamed text still being written
C.pending = {} -- prompts sent whose turn has not started yet (FIFO, like the server's queue)
local tool_names = {} -- toolCallId -> toolName
local changes = {} -- { mark, turnId, files } per "N files changed" line, oldest first
local MAX_CHANGE_ROWS = 200 -- the oldest rows forget their turn beyond this (the text stays)

-- Reasoning summaries are written with this prefix and folded by it (foldexpr below), closed.
local REASONING = "  ┊ "
local FOLD_EXPR = [[getline(v:lnum)=~#'^  ┊'?1:0]]
local FOLD_TEXT = [[printf('  ┊ thinking… (%d line%s; zo opens, zc folds)', v:foldend-v:foldstart+1, v:foldend>v:foldstart?'s':'')]]

local function shiro()
  return require("shiro")
end

local function cfg()
  return shiro().config.chat
end

local function valid()
  return C.buf ~= nil and api.nvim_buf_is_valid(C.buf)
end

local function header()
  return "shiro-neko  " .. (shiro().state.root or vim.fn.getcwd())
end

local function split_lines(lines)
  local out = {}
  for _, l in ipairs(lines) do
    for _, piece in ipairs(vim.split(tostring(l), "\n", { plain = true })) do
      table.insert(out, piece)
    end
  end
  return out
end

local function short(text, max)
  text = tostring(text or ""):gsub("%s+", " ")
  if #text > max then
    text = text:sub(1, max - 1) .. "…"
  end
  return text
end

local function place_mark(row)
  local opts = { id = C.mark, right_gravity = true }
  local hint = { { "── prompt ── <CR> send · <C-c> abort", "Comment" } }
  local ok, id = pcall(api.nvim_buf_set_extmark, C.buf, ns, row, 0,
    vim.tbl_extend("force", opts, { virt_lines = { hint }, virt_lines_above = true }))
  if not ok then
    id = api.nvim_buf_set_extmark(C.buf, ns, row, 0, opts)
  end
  C.mark = id
end

--- First row (0-based) of the input area; the transcript is every row above it.
local function input_row()
  local pos = C.mark and api.nvim_buf_get_extmark_by_id(C.buf, ns, C.mark, {}) or {}
  local count = api.nvim_buf_line_count(C.buf)
  local row = pos[1]
  if row == nil or row < 1 then
    -- the mark is gone (or the user removed the header): the last line is the input again
    row = math.max(count - 1, 1)
    if count < 2 then
      api.nvim_buf_set_lines(C.buf, count, count, false, { "" })
      row = count
    end
    place_mark(row)
  end
  return row
end

local function follow()
  local last = api.nvim_buf_line_count(C.buf)
  local current = api.nvim_get_current_win()
  for _, win in ipairs(api.nvim_list_wins()) do
    if win ~= current and api.nvim_win_get_buf(win) == C.buf then
      pcall(api.nvim_win_set_cursor, win, { last, 0 })
    end
  end
end

function C.ensure()
  if valid() then
    return C.buf
  end
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_get_name(b) == NAME then
      pcall(api.nvim_buf_delete, b, { force = true })
    end
  end
  local buf = api.nvim_create_buf(false, true)
  C.buf, C.mark, C.open_kind, C.pending = buf, nil, nil, {}
  changes = {}
  pcall(api.nvim_buf_set_name, buf, NAME)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].undolevels = -1 -- the transcript is written by the plugin; undo would tear it
  api.nvim_buf_set_lines(buf, 0, -1, false, { header(), "" })
  place_mark(1)
  if cfg().filetype and cfg().filetype ~= "" then
    vim.bo[buf].filetype = cfg().filetype
  end
  local keys = cfg().keys or {}
  local function map(mode, lhs, fn, desc)
    if lhs and lhs ~= "" then
      vim.keymap.set(mode, lhs, fn, { buffer = buf, desc = desc, silent = true })
    end
  end
  map("n", keys.send, C.submit, "shiro: send the prompt")
  map("i", keys.send_insert, C.submit, "shiro: send the prompt")
  map("n", keys.abort, function()
    shiro().abort()
  end, "shiro: abort the turn")
  map("n", keys.diff, function()
    local entry = C.change_at_cursor()
    if entry then
      shiro().turn_diff(nil, entry.turnId)
    end
  end, "shiro: the diff of the turn whose changes are under or above the cursor")
  map("n", keys.undo, function()
    local entry = C.change_at_cursor()
    if entry then
      shiro().undo(nil, entry.turnId)
    end
  end, "shiro: undo a file or the whole turn under or above the cursor")
  return buf
end

--- Show the chat buffer (in a split by `chat.position`); focus it when `focus`, and start insert
--- mode at the input when `insert`.
function C.open(focus, insert)
  local buf = C.ensure()
  local win
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(w) == buf then
      win = w
    end
  end
  local previous = api.nvim_get_current_win()
  if not win then
    local pos, size = cfg().position, tonumber(cfg().size)
    if pos == "bottom" then
      vim.cmd("botright " .. (size and tostring(size) or "") .. "split")
    elseif pos == "tab" then
      vim.cmd("tabnew")
    elseif pos ~= "current" then
      vim.cmd("botright vertical " .. (size and tostring(size) or "") .. "split")
    end
    win = api.nvim_get_current_win()
    api.nvim_win_set_buf(win, buf)
    vim.wo[win].wrap = true
    vim.wo[win].linebreak = true
    vim.wo[win].number = false
    vim.wo[win].relativenumber = false
    vim.wo[win].signcolumn = "no"
    vim.wo[win].foldmethod = "expr"
    vim.wo[win].foldexpr = FOLD_EXPR
    vim.wo[win].foldtext = FOLD_TEXT
    vim.wo[win].foldlevel = 0
    vim.wo[win].foldminlines = 0
    vim.wo[win].foldenable = true
    pcall(function() vim.wo[win].fillchars = "fold: " end) -- no dots after the fold text
    pcall(api.nvim_win_set_cursor, win, { api.nvim_buf_line_count(buf), 0 })
    if not focus and pos ~= "tab" and pos ~= "current" and api.nvim_win_is_valid(previous) then
      api.nvim_set_current_win(previous)
    end
    local panel = require("shiro.panel")
    if panel.todos_visible() then
      panel.show_todos(shiro().state.todos) -- docked above the chat now, off the transcript
    end
  elseif focus then
    api.nvim_set_current_win(win)
  end
  if focus and insert then
    pcall(api.nvim_win_set_cursor, win, { api.nvim_buf_line_count(buf), 0 })
    vim.cmd("startinsert!")
  end
  return win
end

--- Append whole lines to the transcript (they always start on a fresh line).
function C.add_lines(lines)
  C.ensure()
  lines = split_lines(lines)
  local row = input_row()
  local last = api.nvim_buf_get_lines(C.buf, row - 1, row, false)[1] or ""
  local chunk = { "" }
  vim.list_extend(chunk, lines)
  -- insert after the end of the last transcript line: strictly before the mark, so it moves down
  api.nvim_buf_set_text(C.buf, row - 1, #last, row - 1, #last, chunk)
  C.open_kind = nil
  follow()
end

--- Append streamed text to the transcript; `kind` "reasoning" writes every line with the folded
--- reasoning prefix.
function C.stream(text, kind)
  if text == nil or text == "" then
    return
  end
  kind = kind or "text"
  local prefix = kind == "reasoning" and REASONING or ""
  C.ensure()
  if C.open_kind ~= kind then
    C.add_lines({ prefix })
    C.open_kind = kind
  end
  local row = input_row()
  local last = api.nvim_buf_get_lines(C.buf, row - 1, row, false)[1] or ""
  local pieces = vim.split(text, "\n", { plain = true })
  for i = 2, #pieces do
    pieces[i] = prefix .. pieces[i]
  end
  api.nvim_buf_set_text(C.buf, row - 1, #last, row - 1, #last, pieces)
  follow()
end

--- Clear the transcript (new session, resume), keeping whatever is typed in the input.
function C.reset(title)
  C.ensure()
  local row = input_row()
  local last = api.nvim_buf_get_lines(C.buf, row - 1, row, false)[1] or ""
  api.nvim_buf_set_text(C.buf, 0, 0, row - 1, #last, { header() })
  C.open_kind = nil
  tool_names = {}
  for _, entry in ipairs(changes) do
    pcall(api.nvim_buf_del_extmark, C.buf, ns, entry.mark)
  end
  changes = {}
  if title then
    C.add_lines({ "", "== " .. title .. " ==" })
  end
end

--- The text typed in the input area (trimmed), which is then cleared.
function C.take_input()
  C.ensure()
  local row = input_row()
  local lines = api.nvim_buf_get_lines(C.buf, row, -1, false)
  local text = vim.trim(table.concat(lines, "\n"))
  local count = api.nvim_buf_line_count(C.buf)
  local tail = api.nvim_buf_get_lines(C.buf, count - 1, count, false)[1] or ""
  api.nvim_buf_set_text(C.buf, row, 0, count - 1, #tail, { "" })
  place_mark(row)
  return text
end

function C.submit()
  local text = C.take_input()
  if text ~= "" then
    shiro().chat(text)
  end
end

-- ---------------------------------------------------------------------------------------------
-- turns

local function prompt_lines(prompt)
  local lines = { "" }
  for _, l in ipairs(vim.split(prompt, "\n", { plain = true })) do
    table.insert(lines, "> " .. l)
  end
  return lines
end

function C.queue_prompt(prompt)
  local entry = { prompt = prompt, started = false }
  table.insert(C.pending, entry)
  local status = shiro().state.status
  if status and status.running == true then
    shiro()._notify("prompt queued; it runs when the current turn ends")
  end
  return entry
end

function C.on_chat_result(entry, err, result)
  for i, e in ipairs(C.pending) do
    if e == entry then
      table.remove(C.pending, i)
      local why = err and tostring(err.message) or (result and tostring(result.status)) or "?"
      C.add_lines({ "", "-- not sent: " .. short(entry.prompt, 60) .. " (" .. why .. ")" })
      return
    end
  end
  if err then
    C.add_lines({ "-- error: " .. tostring(err.message or vim.inspect(err)) })
  end
end

local function tool_input(input)
  if type(input) ~= "table" then
    return tostring(input)
  end
  local ok, text = pcall(vim.fn.json_encode, input)
  return ok and text or vim.inspect(input)
end

function C.on_event(ev)
  local t = ev.type
  -- A `task` subagent's events (issue 40): its calls, results and notices indented under the task
  -- call; its streamed text is not shown (its report is the task call's result).
  local parent = ev.parentToolCallId
  if type(parent) == "string" then
    if t == E.tool_call then
      tool_names[ev.toolCallId] = ev.toolName
      C.add_lines({ "      | -> " .. tostring(ev.toolName) .. " " .. short(tool_input(ev.input), 100) })
    elseif t == E.tool_result then
      local name = tool_names[ev.toolCallId] or "tool"
      C.add_lines({ "      | <- " .. name .. (ev.isError == true and " failed: " or ": ") .. short(ev.output, 90) })
    elseif t == E.notice then
      C.add_lines({ "      | -- " .. tostring(ev.message) })
    end
    return
  end
  if t == E.turn_start then
    local entry = table.remove(C.pending, 1)
    if entry then
      entry.started = true
      C.add_lines(prompt_lines(entry.prompt))
    else
      C.add_lines({ "", "> (turn resumed)" })
    end
  elseif t == E.text_delta then
    C.stream(ev.text)
  elseif t == E.reasoning_delta then
    C.stream(ev.text, "reasoning")
  elseif t == E.tool_call then
    if not shiro()._is_nil(ev.toolCallId) then
      tool_names[ev.toolCallId] = ev.toolName
    end
    C.add_lines({ "  -> " .. tostring(ev.toolName) .. " " .. short(tool_input(ev.input), 120) })
  elseif t == E.tool_result then
    local name = tool_names[ev.toolCallId] or "tool"
    local out = short(ev.output, 100)
    C.add_lines({ "  <- " .. name .. (ev.isError == true and " failed: " or ": ") .. out })
  elseif t == E.compacted or t == E.notice then
    C.add_lines({ "-- " .. tostring(ev.message) })
  elseif t == E.queued then
    shiro()._notify("prompt queued at position " .. tostring(ev.position))
  elseif t == E.turn_end then
    local line = "-- " .. tostring(ev.status)
    if not shiro()._is_nil(ev.error) and ev.error ~= "" then
      line = line .. ": " .. tostring(ev.error)
    end
    C.add_lines({ line })
    -- A missing or refused key (the server's "Set up model"): Neovim's way to give one.
    if tostring(ev.error or ""):find("Set up model", 1, true) then
      C.add_lines({ "-- Set up model: :ShiroModel setup (endpoint and key for this server)" })
    end
    if type(ev.files) == "table" and #ev.files > 0 then
      C.add_changes(ev.turnId, ev.files)
    end
  end
end

local MAX_NAMED = 6

--- "N files changed: a.py (modified), b.py (added) · <keys>", remembered for the keys at that line.
function C.add_changes(turn_id, files)
  local names = {}
  for i, f in ipairs(files) do
    if i > MAX_NAMED then
      table.insert(names, string.format("and %d more", #files - MAX_NAMED))
      break
    end
    table.insert(names, string.format("%s (%s)", tostring(f.path), tostring(f.change)))
  end
  local keys = cfg().keys or {}
  local hint = (keys.diff and keys.undo) and string.format("  · %s diff · %s undo", keys.diff, keys.undo) or ""
  C.add_lines({ string.format("%d file%s changed: %s%s", #files, #files == 1 and "" or "s", table.concat(names, ", "), hint) })
  local row = input_row() - 1
  local mark = api.nvim_buf_set_extmark(C.buf, ns, row, 0, {})
  table.insert(changes, { mark = mark, turnId = turn_id, files = files })
  if #changes > MAX_CHANGE_ROWS then
    local old = table.remove(changes, 1)
    pcall(api.nvim_buf_del_extmark, C.buf, ns, old.mark)
  end
end

--- Every "files changed" row still in the transcript: { turnId, files } oldest first.
function C.changes()
  return changes
end

--- The "files changed" row at or above the cursor (the nearest), or nil with a message.
function C.change_at_cursor()
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local best, best_row = nil, -1
  for _, entry in ipairs(changes) do
    local pos = api.nvim_buf_get_extmark_by_id(C.buf, ns, entry.mark, {})
    if pos[1] and pos[1] <= row and pos[1] > best_row then
      best, best_row = entry, pos[1]
    end
  end
  if not best then
    shiro()._notify("no turn above the cursor changed files")
  end
  return best
end

--- Render a resumed session's messages (`shiro.resume` result).
--- Put `text` in the input area (a rewind hands the prompt back), replacing what was typed.
function C.set_input(text)
  C.ensure()
  local row = input_row()
  local count = api.nvim_buf_line_count(C.buf)
  local tail = api.nvim_buf_get_lines(C.buf, count - 1, count, false)[1] or ""
  api.nvim_buf_set_text(C.buf, row, 0, count - 1, #tail, vim.split(text, "\n", { plain = true }))
  place_mark(row)
end

function C.show_transcript(result, title)
  C.reset(title or ("resumed " .. tostring(result.sessionId):sub(1, 8) .. "  " .. tostring(result.title or "")))
  for _, m in ipairs(result.messages or {}) do
    for _, part in ipairs(m.content or {}) do
      if part.type == "text" and m.role == "user" then
        C.add_lines(prompt_lines(part.text or ""))
      elseif part.type == "text" then
        C.add_lines(split_lines({ part.text or "" }))
      elseif part.type == "tool-call" then
        tool_names[part.toolCallId or ""] = part.toolName
        C.add_lines({ "  -> " .. tostring(part.toolName) .. " " .. short(tool_input(part.input), 120) })
      elseif part.type == "tool-result" then
        C.add_lines({ "  <- " .. tostring(part.toolName or "tool") .. (part.isError == true and " failed: " or ": ")
          .. short(type(part.output) == "string" and part.output or tool_input(part.output), 100) })
      end
    end
  end
end

--- Transcript lines (for tests and other plugins).
function C.lines()
  if not valid() then
    return {}
  end
  return api.nvim_buf_get_lines(C.buf, 0, -1, false)
end

return C
