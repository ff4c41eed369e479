-- Editor context and intelligence (issue 38; docs/editor-intelligence.md):
--   * what the user sees goes with each prompt (`shiro.chat`'s `context`): the file of the last
--     window that showed a file, its cursor, the visual selection when the chat was opened from one,
--     the visible lines, the listed buffers under the root;
--   * `shiro/diagnostics` is answered with vim.diagnostic.get (every language server the user runs);
--   * `shiro/navigate` with vim.lsp.buf_request_sync to the other clients of the buffer;
--   * shiro's code actions (vim.lsp.buf.code_action()) run `shiro.ask` on the server; its
--     `shiro/focusChat` opens the chat with that context, or, for "Edit with shiro-neko…", asks for
--     an instruction, runs `shiro.inlineEdit` and shows the proposal in a diff tab (ga accepts, gr
--     rejects).
-- config.editor_context = false stops sending the context.

local M = {}
local wire = require("shiro.protocol")

local api = vim.api
local MAX_OPEN_FILES = 30
local MAX_SELECTION = 20000
local MAX_PER_FILE = 200
local NAVIGATE_TIMEOUT_MS = 4000

-- the last window that showed a file (the chat buffer is not one)
M.last = { win = nil, buf = nil }
-- a code action's context, sent with the next prompt instead of the editor's
M.pinned = nil
-- how many times each buffer's diagnostics were set (`generation`: the server then knows the
-- language servers looked at an edit even when they found nothing new)
M.generations = {}

local function is_file_buf(buf)
  return api.nvim_buf_is_valid(buf) and vim.bo[buf].buftype == "" and api.nvim_buf_get_name(buf) ~= ""
end

function M.track()
  local group = api.nvim_create_augroup("shiro_editor_context", { clear = true })
  api.nvim_create_autocmd({ "BufEnter", "WinEnter", "CursorMoved" }, {
    group = group,
    callback = function()
      local buf = api.nvim_get_current_buf()
      if is_file_buf(buf) then
        M.last = { win = api.nvim_get_current_win(), buf = buf }
      end
    end,
  })
  api.nvim_create_autocmd("DiagnosticChanged", {
    group = group,
    callback = function(ev)
      M.generations[ev.buf] = (M.generations[ev.buf] or 0) + 1
    end,
  })
  api.nvim_create_autocmd("BufWipeout", {
    group = group,
    callback = function(ev)
      M.generations[ev.buf] = nil
    end,
  })
end

--- The client's capabilities for `experimental.shiro.editor`.
function M.capabilities()
  return { diagnostics = true, navigation = true }
end

local function utf16_col(buf, line, byte_col)
  local text = api.nvim_buf_get_lines(buf, line, line + 1, false)[1] or ""
  local ok, col = pcall(vim.str_utfindex, text, math.min(byte_col, #text))
  return ok and col or byte_col
end

local function position(buf, line, byte_col)
  return { line = line, character = utf16_col(buf, line, byte_col) }
end

--- The visual selection of `buf` ('< and '> marks) as an LSP range and its text, or nil.
local function selection_of(buf, linewise)
  local s = api.nvim_buf_get_mark(buf, "<")
  local e = api.nvim_buf_get_mark(buf, ">")
  if s[1] == 0 or e[1] == 0 then
    return nil
  end
  local first, last = s[1] - 1, e[1] - 1
  local lines = api.nvim_buf_get_lines(buf, first, last + 1, false)
  local range
  if linewise then
    range = { start = { line = first, character = 0 }, ["end"] = { line = last + 1, character = 0 } }
    lines[#lines + 1] = ""
  else
    local end_byte = math.min(e[2] + 1, #(lines[#lines] or ""))
    lines[#lines] = (lines[#lines] or ""):sub(1, end_byte)
    lines[1] = (lines[1] or ""):sub(s[2] + 1)
    range = { start = position(buf, first, s[2]), ["end"] = position(buf, last, end_byte) }
  end
  return { uri = vim.uri_from_bufnr(buf), range = range, text = table.concat(lines, "\n"):sub(1, MAX_SELECTION) }
end

local function open_files(root)
  local out = {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if #out >= MAX_OPEN_FILES then
      break
    end
    local name = api.nvim_buf_get_name(buf)
    if vim.bo[buf].buflisted and is_file_buf(buf) and (not root or name:sub(1, #root + 1) == root .. "/") then
      out[#out + 1] = vim.uri_from_fname(name)
    end
  end
  return out
end

--- What the editor shows now (`range`: a :'<,'>ShiroChat sends the visual selection), or nil.
function M.context(range, root)
  if M.pinned then
    local pinned = M.pinned
    M.pinned = nil
    return pinned
  end
  local buf, win = M.last.buf, M.last.win
  if not buf or not is_file_buf(buf) then
    return nil
  end
  local ctx = { activeFile = vim.uri_from_bufnr(buf), openFiles = open_files(root) }
  if win and api.nvim_win_is_valid(win) and api.nvim_win_get_buf(win) == buf then
    local cursor = api.nvim_win_get_cursor(win)
    ctx.cursor = position(buf, cursor[1] - 1, cursor[2])
    local first, last = vim.fn.line("w0", win), vim.fn.line("w$", win)
    ctx.visibleRange = {
      uri = ctx.activeFile,
      range = { start = { line = first - 1, character = 0 }, ["end"] = { line = last, character = 0 } },
    }
  end
  if range then
    ctx.selection = selection_of(buf, range == "line")
  end
  return ctx
end

-- ---------------------------------------------------------------------------------------------
-- server -> client

local function lsp_diagnostic(buf, d)
  local lsp = d.user_data and d.user_data.lsp
  if type(lsp) == "table" and lsp.range and lsp.message then
    return { range = lsp.range, message = lsp.message, severity = lsp.severity, code = lsp.code, source = lsp.source }
  end
  return {
    range = { start = position(buf, d.lnum, d.col), ["end"] = position(buf, d.end_lnum or d.lnum, d.end_col or d.col) },
    message = d.message,
    severity = d.severity,
    code = d.code,
    source = d.source,
  }
end

--- `shiro/diagnostics {uris?}` -> `{items: [{uri, diagnostics}]}` from vim.diagnostic.get.
function M.diagnostics(params)
  local bufs = {}
  local asked = params and type(params.uris) == "table" and params.uris or nil
  if asked then
    for _, uri in ipairs(asked) do
      local buf = vim.fn.bufnr(vim.uri_to_fname(uri))
      bufs[#bufs + 1] = { uri = uri, buf = buf }
    end
  else
    for _, buf in ipairs(api.nvim_list_bufs()) do
      if is_file_buf(buf) then
        bufs[#bufs + 1] = { uri = vim.uri_from_bufnr(buf), buf = buf }
      end
    end
  end
  local items = {}
  for _, entry in ipairs(bufs) do
    local found = {}
    if entry.buf > 0 then
      for i, d in ipairs(vim.diagnostic.get(entry.buf)) do
        if i > MAX_PER_FILE then
          break
        end
        found[#found + 1] = lsp_diagnostic(entry.buf, d)
      end
    end
    if #found > 0 or asked then
      items[#items + 1] = { uri = entry.uri, diagnostics = found, generation = M.generations[entry.buf] or 0 }
    end
  end
  return { items = items }
end

local function results_of(responses)
  local out = {}
  for _, response in pairs(responses or {}) do
    local result = response.result
    if type(result) == "table" then
      if result.uri or result.targetUri then
        result = { result }
      end
      for _, item in ipairs(result) do
        out[#out + 1] = item
      end
    end
  end
  return out
end

local function as_location(item)
  if item.targetUri then
    return { uri = item.targetUri, range = item.targetSelectionRange or item.targetRange }
  end
  return { uri = item.uri, range = item.range }
end

--- `shiro/navigate {kind, uri?, position?, query?}` through the buffer's other language servers.
function M.navigate(params)
  local uri = params.uri
  local buf
  if uri and uri ~= vim.NIL then
    buf = vim.uri_to_bufnr(uri)
    vim.fn.bufload(buf)
  else
    buf = M.last.buf or api.nvim_get_current_buf()
  end
  if params.kind == "symbols" then
    local responses = vim.lsp.buf_request_sync(buf, "workspace/symbol", { query = params.query or "" }, NAVIGATE_TIMEOUT_MS)
    local symbols = {}
    for _, s in ipairs(results_of(responses)) do
      if s.location and s.location.range then
        symbols[#symbols + 1] = { name = s.name, kind = s.kind, location = s.location, containerName = s.containerName }
      end
    end
    return { symbols = symbols }
  end
  local doc = { textDocument = { uri = uri }, position = params.position }
  if params.kind == "hover" then
    local parts = {}
    for _, response in pairs(vim.lsp.buf_request_sync(buf, "textDocument/hover", doc, NAVIGATE_TIMEOUT_MS) or {}) do
      local contents = response.result and response.result.contents
      if type(contents) == "table" then
        parts[#parts + 1] = contents.value or table.concat(vim.tbl_map(function(c)
          return type(c) == "table" and (c.value or "") or tostring(c)
        end, contents), "\n")
      elseif type(contents) == "string" then
        parts[#parts + 1] = contents
      end
    end
    return { hover = table.concat(parts, "\n\n") }
  end
  local method = params.kind == "definition" and "textDocument/definition" or "textDocument/references"
  if params.kind == "references" then
    doc.context = { includeDeclaration = true }
  end
  local locations = {}
  for _, item in ipairs(results_of(vim.lsp.buf_request_sync(buf, method, doc, NAVIGATE_TIMEOUT_MS))) do
    locations[#locations + 1] = as_location(item)
  end
  return { locations = locations }
end

-- ---------------------------------------------------------------------------------------------
-- inline edit: a diff tab, ga accepts, gr rejects

local function apply_text_edits(lines, edits)
  local text = table.concat(lines, "\n")
  local function offset(pos)
    local index = 1
    for _ = 1, pos.line do
      local nl = text:find("\n", index, true)
      if not nl then
        return #text + 1
      end
      index = nl + 1
    end
    local line_end = text:find("\n", index, true) or (#text + 1)
    local line = text:sub(index, line_end - 1)
    local ok, byte = pcall(vim.str_byteindex, line, pos.character)
    return index + (ok and byte or pos.character)
  end
  table.sort(edits, function(a, b)
    return offset(a.range.start) > offset(b.range.start)
  end)
  for _, e in ipairs(edits) do
    text = text:sub(1, offset(e.range.start) - 1) .. e.newText .. text:sub(offset(e.range["end"]))
  end
  return vim.split(text, "\n", { plain = true })
end

--- Show `result` (shiro.inlineEdit's answer) for `buf` as a diff; resolve with ga / gr.
function M.show_inline_edit(buf, result)
  local shiro = require("shiro")
  local edits = result.edit and result.edit.changes and result.edit.changes[vim.uri_from_bufnr(buf)]
  if type(edits) ~= "table" or #edits == 0 then
    vim.notify("shiro: " .. tostring(result.error or "no edit came back"), vim.log.levels.WARN)
    return
  end
  local proposed = apply_text_edits(api.nvim_buf_get_lines(buf, 0, -1, false), vim.deepcopy(edits))
  vim.cmd("tab split")
  api.nvim_win_set_buf(0, buf)
  vim.cmd("diffthis")
  vim.cmd("vnew")
  local scratch = api.nvim_get_current_buf()
  vim.bo[scratch].buftype, vim.bo[scratch].bufhidden, vim.bo[scratch].swapfile = "nofile", "wipe", false
  vim.bo[scratch].filetype = vim.bo[buf].filetype
  api.nvim_buf_set_lines(scratch, 0, -1, false, proposed)
  api.nvim_buf_set_name(scratch, "shiro-inline-edit://" .. result.turnId)
  vim.bo[scratch].modifiable = false
  vim.cmd("diffthis")
  local done = false
  local function resolve(accept)
    if done then
      return
    end
    done = true
    vim.cmd("tabclose")
    shiro.execute(wire.commands.resolveInlineEdit, { turnId = result.turnId, accept = accept }, function(err, r)
      M.last_resolved = { accept = accept, applied = r and r.applied, error = err and err.message }
    end)
  end
  for _, b in ipairs({ scratch, buf }) do
    vim.keymap.set("n", "ga", function() resolve(true) end, { buffer = b, desc = "shiro: accept the inline edit" })
    vim.keymap.set("n", "gr", function() resolve(false) end, { buffer = b, desc = "shiro: reject the inline edit" })
  end
  M.showing = { scratch = scratch, buf = buf, turnId = result.turnId, lines = proposed, resolve = resolve }
  vim.notify("shiro: the proposed edit is on the right: ga accepts, gr rejects", vim.log.levels.INFO)
end

--- "Edit with shiro-neko…": ask for the instruction, run the turn, show the diff.
function M.inline_edit(context, instruction)
  local uri = (context.selection and context.selection.uri) or context.activeFile
  if not uri then
    return
  end
  local range = context.selection and context.selection.range
  local cursor = context.cursor or (range and range.start) or { line = 0, character = 0 }
  if not range or (range.start.line == range["end"].line and range.start.character == range["end"].character) then
    range = { start = { line = cursor.line, character = 0 }, ["end"] = { line = cursor.line + 1, character = 0 } }
  end
  local function run(text)
    if not text or text:match("^%s*$") then
      return
    end
    require("shiro").execute(wire.commands.inlineEdit, { uri = uri, range = range, instruction = text }, function(err, result)
      if not err and result then
        M.show_inline_edit(vim.uri_to_bufnr(uri), result)
      end
    end)
  end
  if instruction then
    return run(instruction)
  end
  vim.ui.input({ prompt = "Edit with shiro-neko: " }, run)
end

--- `shiro/focusChat {sessionId, context, action}`.
function M.on_focus_chat(_, params)
  if type(params) ~= "table" or type(params.context) ~= "table" then
    return
  end
  if params.action == "edit" then
    return M.inline_edit(params.context)
  end
  M.pinned = params.context
  require("shiro.chat").open(true, true)
end

return M
