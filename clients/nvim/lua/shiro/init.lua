-- shiro-neko for Neovim: one language-server client per Neovim instance, a chat buffer, the task
-- list in a panel and the context gauge for the statusline.
--
--   require("shiro").setup({ cmd = { "shiro-lsp" }, settings = { model = "gpt-5" } })
--
-- Works on Neovim 0.7 and later (vim.lsp.start with attach = false on 0.11+, vim.lsp.start_client
-- before that). See docs/neovim.md.

local M = {}

local wire = require("shiro.protocol")

local uv = vim.uv or vim.loop
local api = vim.api

local function has(version)
  return vim.fn.has("nvim-" .. version) == 1
end

local defaults = {
  cmd = { "shiro-lsp" },
  cmd_env = nil,
  root_dir = nil, -- string, or function returning one; default: nearest root marker above cwd
  root_markers = { ".git" },
  settings = nil, -- the `shiro` settings section (docs/protocol: model, baseUrl, approvals, ...)
  attach_buffers = true, -- attach file buffers under the root (the agent sees unsaved text, edits get undo)
  chat = {
    position = "right", -- "right" | "bottom" | "tab" | "current"
    size = 80, -- columns (right) or lines (bottom)
    filetype = "markdown",
    -- diff / undo: the turn whose "N files changed" line is at or above the cursor
    keys = { send = "<CR>", send_insert = "<C-s>", abort = "<C-c>", diff = "gd", undo = "gu" },
  },
  todos = {
    layout = "dock", -- "dock" (above the chat transcript) | "float" (beside it) | "split" (bottom)
    auto_open = false, -- open the panel when the agent first writes a task list
  },
}

M.config = vim.deepcopy(defaults)

-- Everything a statusline, a test or another plugin may want to read.
M.state = {
  client_id = nil,
  root = nil,
  ready = false,
  session_id = nil,
  status = nil, -- last `shiro/status` params
  todos = nil, -- last `shiro/todos` params
  last_turn_end = nil, -- last `turn_end` event
  last_changes = nil, -- { turnId, files } of the last turn that changed files
  turns_ended = 0,
}

local listeners = { event = {}, todos = {}, status = {} }
local waiting = {} -- callbacks waiting for the client to finish `initialize`

local function is_nil(v)
  return v == nil or v == vim.NIL
end
M._is_nil = is_nil

local function notify(msg, level)
  vim.notify("shiro: " .. msg, level or vim.log.levels.INFO)
end
M._notify = notify

-- Lua's empty table encodes as a JSON array; the server wants objects.
local function object(t)
  if t == nil or next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

local function settings()
  return object(vim.deepcopy(M.config.settings or {}))
end

--- Call a method on a client object: `client:request` on 0.11+, `client.request` before.
local function call(client, name, ...)
  if has("0.11") then
    return client[name](client, ...)
  end
  return client[name](...)
end

-- ---------------------------------------------------------------------------------------------
-- setup

function M.setup(opts)
  opts = opts or {}
  local cfg = vim.tbl_deep_extend("force", vim.deepcopy(defaults), opts)
  -- lists and the settings object are taken as given, not merged index by index
  if opts.cmd then
    cfg.cmd = opts.cmd
  end
  if opts.root_markers then
    cfg.root_markers = opts.root_markers
  end
  cfg.settings = opts.settings and vim.deepcopy(opts.settings) or nil
  M.config = cfg
  require("shiro.commands").define()
  require("shiro.permissions").watch_focus() -- approvals notify only while Neovim is out of focus
  require("shiro.editor").track() -- the file the user looks at, for each prompt's context
  vim.cmd("highlight default link ShiroStatusNormal StatusLine")
  vim.cmd("highlight default link ShiroStatusAmber WarningMsg")
  vim.cmd("highlight default link ShiroStatusRed ErrorMsg")
  return M
end

--- Subscribe to `event` (every `shiro/event`), `todos` or `status` notifications.
function M.on(kind, fn)
  assert(listeners[kind], "shiro.on: kind is event, todos or status")
  table.insert(listeners[kind], fn)
end

local function emit(kind, params, pattern)
  for _, fn in ipairs(listeners[kind]) do
    local ok, err = pcall(fn, params)
    if not ok then
      notify("listener failed: " .. tostring(err), vim.log.levels.ERROR)
    end
  end
  pcall(api.nvim_exec_autocmds, "User", { pattern = pattern, modeline = false })
end

-- ---------------------------------------------------------------------------------------------
-- workspace root

local function normalize(path)
  local p = vim.fn.fnamemodify(vim.fn.resolve(vim.fn.expand(path)), ":p")
  if #p > 1 then
    p = p:gsub("/+$", "")
  end
  return p
end

function M.find_root()
  local given = M.config.root_dir
  if type(given) == "function" then
    given = given()
  end
  if type(given) == "string" and given ~= "" then
    return normalize(given)
  end
  local dir = normalize(vim.fn.getcwd())
  local start = dir
  while true do
    for _, marker in ipairs(M.config.root_markers or {}) do
      if uv.fs_stat(dir .. "/" .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      return start
    end
    dir = parent
  end
end

-- ---------------------------------------------------------------------------------------------
-- buffers the server should know about

local function under_root(bufnr)
  local root = M.state.root
  if not root or not api.nvim_buf_is_loaded(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return false
  end
  local name = api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return false
  end
  local path = normalize(name)
  return path:sub(1, #root + 1) == root .. "/"
end

function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  local id = M.state.client_id
  if id and M.state.ready and under_root(bufnr) and not vim.lsp.buf_is_attached(bufnr, id) then
    vim.lsp.buf_attach_client(bufnr, id)
  end
end

local function attach_all()
  if not M.config.attach_buffers then
    return
  end
  for _, bufnr in ipairs(api.nvim_list_bufs()) do
    M.attach(bufnr)
  end
  local group = api.nvim_create_augroup("shiro_attach", { clear = true })
  api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufEnter" }, {
    group = group,
    callback = function(ev)
      M.attach(ev.buf)
    end,
  })
end

-- ---------------------------------------------------------------------------------------------
-- server -> client

local function on_event(_, params)
  if type(params) ~= "table" then
    return
  end
  if params.type == wire.events.turn_end then
    M.state.last_turn_end = params
    M.state.turns_ended = M.state.turns_ended + 1
    if type(params.files) == "table" and #params.files > 0 then
      M.state.last_changes = { turnId = params.turnId, files = params.files }
    end
    require("shiro.custom_commands").refresh() -- a skill added, a folder trusted: `:Shiro /` sees it
  end
  if not is_nil(params.sessionId) then
    M.state.session_id = params.sessionId
  end
  require("shiro.chat").on_event(params)
  require("shiro.permissions").on_event(params) -- a long turn's end: vim.notify
  require("shiro.plan").on_event(params)
  emit("event", params, "ShiroEvent")
end

local function on_todos(_, params)
  if type(params) ~= "table" then
    return
  end
  local first = M.state.todos == nil
  M.state.todos = params
  local panel = require("shiro.panel")
  local has_tasks = type(params.todos) == "table" and #params.todos > 0
  if panel.todos_visible() or (first and has_tasks and M.config.todos.auto_open) then
    panel.show_todos(params)
  end
  emit("todos", params, "ShiroTodos")
end

local function on_status(_, params)
  if type(params) ~= "table" then
    return
  end
  M.state.status = params
  if not is_nil(params.sessionId) then
    M.state.session_id = params.sessionId
  end
  pcall(vim.cmd, "redrawstatus!")
  emit("status", params, "ShiroStatus")
end

--- Approvals (and any other question the server asks): vim.ui.select over the action titles.
--- On Neovim 0.10+ server requests run in a coroutine, so an asynchronous picker works; before
--- that the answer has to come back synchronously (the default vim.ui.select does).
local function on_message_request(_, params)
  local actions = (params and params.actions) or {}
  if #actions == 0 then
    return vim.NIL
  end
  local function pick(done)
    vim.ui.select(actions, {
      prompt = params.message,
      kind = "shiro_approval",
      format_item = function(action)
        return action.title
      end,
    }, done)
  end
  local co, main = coroutine.running()
  if co and not main then
    local answer, answered, parked = nil, false, false
    pick(function(choice)
      answer, answered = choice or vim.NIL, true
      if parked then
        vim.schedule(function()
          coroutine.resume(co)
        end)
      end
    end)
    if not answered then
      parked = true
      coroutine.yield()
    end
    return answer
  end
  local answer = nil
  pick(function(choice)
    answer = choice or vim.NIL
  end)
  if answer == nil then
    notify("this Neovim needs a synchronous vim.ui.select for approvals; answered Deny", vim.log.levels.WARN)
    return vim.NIL
  end
  return answer
end

-- `shiro/saveDocuments {uris}`: write the buffers the agent just edited through applyEdit.
local function on_save_documents(_, params)
  local saved = {}
  for _, uri in ipairs((params and params.uris) or {}) do
    local ok, bufnr = pcall(vim.uri_to_bufnr, uri)
    if ok and api.nvim_buf_is_loaded(bufnr) then
      local wrote = pcall(api.nvim_buf_call, bufnr, function()
        vim.cmd("silent update")
      end)
      if wrote then
        table.insert(saved, uri)
      end
    end
  end
  return { saved = saved }
end

local function on_approve(_, params)
  return require("shiro.approve").handle(params)
end

local handlers = {
  [wire.notifications.event] = on_event,
  [wire.server_requests.approve] = on_approve,
  [wire.notifications.todos] = on_todos,
  [wire.notifications.status] = on_status,
  ["window/showMessageRequest"] = on_message_request,
  [wire.server_requests.saveDocuments] = on_save_documents,
  [wire.server_requests.diagnostics] = function(_, params) return require("shiro.editor").diagnostics(params) end,
  [wire.server_requests.navigate] = function(_, params) return require("shiro.editor").navigate(params) end,
  [wire.notifications.focusChat] = function(err, params) return require("shiro.editor").on_focus_chat(err, params) end,
}

-- ---------------------------------------------------------------------------------------------
-- the client

function M.client()
  local id = M.state.client_id
  local client = id and vim.lsp.get_client_by_id(id)
  if client and (not client.is_stopped or not call(client, "is_stopped")) then
    return client
  end
  return nil
end

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.experimental = caps.experimental or {}
  -- approvals: shiro/approve carries the edit's diff and takes a reason with a denial
  -- editor: shiro/diagnostics and shiro/navigate from vim.diagnostic and the other language servers (editor.lua)
  caps.experimental.shiro = { saveDocuments = true, approvals = true, editor = require("shiro.editor").capabilities() }
  return caps
end

local function flush_waiting(client)
  local queue = waiting
  waiting = {}
  for _, fn in ipairs(queue) do
    local ok, err = pcall(fn, client)
    if not ok then
      notify(tostring(err), vim.log.levels.ERROR)
    end
  end
end

--- Start the client for the workspace root (once); returns its id or nil.
function M.start()
  if M.client() then
    return M.state.client_id
  end
  local root = M.find_root()
  local s = settings()
  local config = {
    name = "shiro-neko",
    cmd = M.config.cmd,
    cmd_env = M.config.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ":t") } },
    init_options = s,
    settings = { shiro = s },
    capabilities = capabilities(),
    handlers = handlers,
    on_init = function(client)
      M.state.ready = true
      vim.schedule(function()
        attach_all()
        flush_waiting(client)
      end)
    end,
    on_exit = function(code, signal, client_id)
      vim.schedule(function()
        if M.state.client_id == client_id then
          M.state.client_id, M.state.ready = nil, false
          waiting = {}
          if code ~= 0 then
            notify(string.format("server exited (code %s, signal %s)", tostring(code), tostring(signal)), vim.log.levels.WARN)
          end
        end
      end)
    end,
  }
  local ok, id
  if has("0.11") then
    ok, id = pcall(vim.lsp.start, config, { attach = false })
  else
    ok, id = pcall(vim.lsp.start_client, config)
  end
  if not ok or not id then
    notify("could not start " .. table.concat(M.config.cmd, " ") .. (ok and "" or (": " .. tostring(id))), vim.log.levels.ERROR)
    return nil
  end
  M.state.client_id, M.state.root, M.state.ready = id, root, false
  return id
end

--- Stop the client (it is also stopped when Neovim exits).
function M.stop()
  local client = M.client()
  if client then
    call(client, "stop")
  end
end

--- Run fn(client) once the client is initialized (starting it when needed).
function M.with_client(fn)
  if not M.start() then
    return
  end
  if M.state.ready then
    fn(M.client())
  else
    table.insert(waiting, fn)
  end
end

--- `workspace/executeCommand` with one object argument; cb(err, result). An error is also shown
--- unless `quiet` is true.
function M.execute(command, arg, cb, quiet)
  M.with_client(function(client)
    local params = { command = command, arguments = { object(arg) } }
    call(client, "request", "workspace/executeCommand", params, function(err, result)
      if err and not quiet then
        local msg = tostring(err.message or vim.inspect(err))
        if msg:sub(1, #command + 1) ~= command .. ":" then
          msg = command .. ": " .. msg
        end
        notify(msg, vim.log.levels.ERROR)
      end
      if cb then
        cb(err, result)
      end
    end)
  end)
end

--- Send new settings (the `shiro` section) to the running server.
function M.update_settings(new)
  M.config.settings = vim.tbl_deep_extend("force", M.config.settings or {}, new or {})
  local client = M.client()
  if client then
    client.config.settings = { shiro = settings() }
    if client.settings then
      client.settings = client.config.settings
    end
    call(client, "notify", "workspace/didChangeConfiguration", { settings = { shiro = settings() } })
  end
end

-- ---------------------------------------------------------------------------------------------
-- commands

function M.chat(prompt, cb)
  prompt = prompt or ""
  if prompt:match("^%s*$") then
    return
  end
  local chat = require("shiro.chat")
  chat.open(false)
  local entry = chat.queue_prompt(prompt)
  -- what the editor shows goes with the prompt (editor.lua); config.editor_context = false: not sent
  local context = M.config.editor_context ~= false and require("shiro.editor").context(M.state.selection, M.state.root) or nil
  M.state.selection = nil
  local images = M.state.images
  M.state.images = nil
  M.execute(wire.commands.chat, { prompt = prompt, context = context, images = images }, function(err, result)
    chat.on_chat_result(entry, err, result)
    if result and not is_nil(result.sessionId) then
      M.state.session_id = result.sessionId
    end
    if cb then
      cb(err, result)
    end
  end, true)
end

local IMAGE_TYPES = { png = "image/png", jpg = "image/jpeg", jpeg = "image/jpeg", gif = "image/gif", webp = "image/webp" }

--- `:ShiroAttachImage path`: the image goes with the next prompt (the server checks, downscales
--- and stores it: docs/extending.md "Images"); at most 8, each at most 20 MB.
function M.attach_image(path)
  local file = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  local media = IMAGE_TYPES[(file:match("%.(%w+)$") or ""):lower()]
  if not media then
    return M._notify("not an image name (png, jpg, gif, webp): " .. path, vim.log.levels.ERROR)
  end
  local size = vim.fn.getfsize(file)
  if size < 0 then
    return M._notify("no such file: " .. file, vim.log.levels.ERROR)
  elseif size > 20 * 1024 * 1024 then
    return M._notify(file .. " is over 20 MB; attach a smaller image", vim.log.levels.ERROR)
  end
  M.state.images = M.state.images or {}
  if #M.state.images >= 8 then
    return M._notify("at most 8 images go with one prompt", vim.log.levels.ERROR)
  end
  if not (vim.base64 and vim.base64.encode) then
    return M._notify(":ShiroAttachImage needs Neovim 0.10 or later (vim.base64)", vim.log.levels.ERROR)
  end
  local f = assert(io.open(file, "rb"))
  local data = f:read("*a")
  f:close()
  table.insert(M.state.images, { mediaType = media, data = vim.base64.encode(data), name = vim.fn.fnamemodify(file, ":t") })
  M._notify(("image %s goes with the next prompt (%d attached)"):format(vim.fn.fnamemodify(file, ":t"), #M.state.images))
end

--- `:ShiroChat` without a prompt opens the chat buffer at its input line.
--- `:'<,'>ShiroChat`: the next prompt carries these lines of the file as its selection (the
--- visual selection as it was made when the range is its lines and it was charwise).
function M.select_lines(line1, line2)
  local buf = vim.api.nvim_get_current_buf()
  if buf ~= require("shiro.editor").last.buf then
    return -- a range in the chat buffer or a scratch buffer is no file's selection
  end
  local s, e = vim.api.nvim_buf_get_mark(buf, "<"), vim.api.nvim_buf_get_mark(buf, ">")
  if s[1] == line1 and e[1] == line2 and vim.fn.visualmode() == "v" then
    M.state.selection = "char"
    return
  end
  vim.api.nvim_buf_set_mark(buf, "<", line1, 0, {})
  vim.api.nvim_buf_set_mark(buf, ">", line2, 0, {})
  M.state.selection = "line"
end

function M.chat_command(args)
  if args and not args:match("^%s*$") then
    M.chat(args)
  else
    M.start()
    require("shiro.chat").open(true, true)
  end
end

function M.abort()
  M.execute(wire.commands.abort, {}, function(err, result)
    if err or not result then
      return
    end
    local cleared = tonumber(result.clearedQueued) or 0
    local msg = result.aborted and "turn aborted" or "no turn was running"
    if cleared > 0 then
      msg = msg .. string.format(", %d queued prompt(s) dropped", cleared)
    end
    notify(msg)
  end)
end

function M.new_session(private)
  M.execute(wire.commands.newSession, private and { private = true } or {}, function(err, result)
    if err or not result then
      return
    end
    M.state.session_id = result.sessionId
    require("shiro.chat").reset(string.format("new %ssession %s", private and "private " or "", tostring(result.sessionId):sub(1, 8)))
  end)
end

function M.compact(focus)
  local arg = {}
  if focus and not focus:match("^%s*$") then
    arg.focus = focus
  end
  notify("compacting...")
  M.execute(wire.commands.compact, arg, function(err, result)
    if err or not result then
      return
    end
    local line = string.format("-- compacted: %s messages to %s", tostring(result.messagesBefore), tostring(result.messagesAfter))
    require("shiro.chat").add_lines({ line })
    notify(line:sub(4))
  end)
end

function M.notes()
  M.execute(wire.commands.notes, {}, function(err, result)
    if err or not result then
      return
    end
    local lines = {}
    for _, e in ipairs(result.entries or {}) do
      local by = type(e.sessionId) == "string" and ("  session " .. e.sessionId:sub(1, 8)) or ""
      table.insert(lines, string.format("[%s] %s  (hits %s)%s", tostring(e.kind), tostring(e.text), tostring(e.hits), by))
    end
    if #lines == 0 then
      lines = { "(no project notes yet)" }
    end
    require("shiro.panel").scratch("shiro://notes", lines)
  end)
end

function M.todos()
  local panel = require("shiro.panel")
  if panel.todos_visible() then
    panel.close_todos()
    return
  end
  M.execute(wire.commands.todos, {}, function(err, result)
    if err or not result then
      return
    end
    M.state.todos = vim.tbl_extend("force", M.state.todos or {}, result)
    panel.show_todos(M.state.todos)
  end)
end

function M.resume(prefix)
  local arg = (prefix and not prefix:match("^%s*$")) and { id = vim.trim(prefix) } or { latest = true }
  M.execute(wire.commands.resume, arg, function(err, result)
    if err or not result then
      return
    end
    M.state.session_id = result.sessionId
    require("shiro.chat").show_transcript(result)
    notify("resumed " .. tostring(result.sessionId):sub(1, 8) .. ": " .. tostring(result.title or ""))
  end)
end

local CHANGE_MARK = { added = "+", deleted = "-", modified = "~" }

--- `:ShiroRewind`: pick a checkpoint, then files and conversation or files only.
function M.rewind()
  M.execute(wire.commands.checkpoints, {}, function(err, result)
    if err or not result then
      return
    end
    local rows = result.checkpoints or {}
    if #rows == 0 then
      notify("no checkpoints yet: one is recorded before each turn's first tool")
      return
    end
    vim.ui.select(rows, {
      prompt = "Rewind to before which turn?",
      kind = "shiro_checkpoints",
      format_item = function(c)
        local files = {}
        for i, f in ipairs(c.files or {}) do
          if i > 4 then
            table.insert(files, "...")
            break
          end
          table.insert(files, (CHANGE_MARK[f.change] or "~") .. tostring(f.path))
        end
        local label = (c.prompt ~= nil and c.prompt ~= "" and not is_nil(c.prompt)) and c.prompt or "(no prompt)"
        return string.format("%s  %s  [%s]", tostring(c.createdAt or ""):sub(1, 16), label:gsub("\n", " "):sub(1, 60),
          #files > 0 and table.concat(files, " ") or "no file changed")
      end,
    }, function(choice)
      if not choice then
        return
      end
      vim.ui.select({ "Files and conversation", "Files only" }, { prompt = "Restore", kind = "shiro_rewind" }, function(how)
        if how then
          M.rewind_to(choice.turnId, how == "Files only", false)
        end
      end)
    end)
  end)
end

--- `paths`: restore only these workspace-relative files (files only, the conversation untouched).
function M.rewind_to(turn_id, files_only, force, paths, undo)
  local arg = { turnId = turn_id, conversation = not files_only, force = force or nil, paths = paths }
  M.execute(wire.commands.rewind, arg, function(err, result)
    if err or not result then
      return
    end
    local chat = require("shiro.chat")
    local restored = result.restored or {}
    local conflicts = {}
    for _, c in ipairs(result.conflicts or {}) do
      table.insert(conflicts, string.format("%s (%s)", tostring(c.path), tostring(c.reason)))
    end
    if result.messages ~= nil and not is_nil(result.messages) then
      chat.show_transcript({ sessionId = result.sessionId, messages = result.messages }, "rewound " .. tostring(result.sessionId):sub(1, 8))
    end
    if not undo and result.prompt ~= nil and not is_nil(result.prompt) and result.prompt ~= "" then
      chat.set_input(result.prompt)
    end
    local msg = string.format("%s: %d file(s) restored", undo and "undone" or "rewound", #restored)
    if #conflicts > 0 then
      msg = msg .. "; left as they are: " .. table.concat(conflicts, ", ")
    end
    if undo then
      chat.add_lines({ "-- " .. msg .. (#restored > 0 and (" (" .. table.concat(restored, ", ") .. ")") or "") })
    end
    notify(msg, #conflicts > 0 and vim.log.levels.WARN or nil)
  end)
end

--- The turn `turn_id` (default: the last one that changed files), or nil with a message.
local function changed_turn(turn_id)
  if turn_id and turn_id ~= "" then
    return turn_id
  end
  local last = M.state.last_changes
  if not last then
    notify("no turn has changed files yet in this Neovim")
    return nil
  end
  return last.turnId
end

--- `:ShiroDiff [path]`: what a turn changed (`shiro.turnDiff`), in a diff buffer.
function M.turn_diff(path, turn_id)
  turn_id = changed_turn(turn_id)
  if not turn_id then
    return
  end
  local arg = { turnId = turn_id }
  if path and not path:match("^%s*$") then
    arg.path = vim.trim(path)
  end
  M.execute(wire.commands.turnDiff, arg, function(err, result)
    if err or not result then
      return
    end
    local lines = vim.split(tostring(result.diff or ""), "\n", { plain = true })
    if lines[#lines] == "" then
      table.remove(lines)
    end
    if #lines == 0 then
      lines = { "(no changes left in this turn's files)" }
    end
    if result.truncated == true then
      table.insert(lines, "… cut here: :ShiroDiff {file} shows one file")
    end
    require("shiro.panel").scratch("shiro://diff", lines, { filetype = "diff", height = math.floor(vim.o.lines / 2) })
  end)
end

--- `:ShiroUndo [path]`: restore one file (or, picked from a list, all of them) to before the turn.
function M.undo(path, turn_id)
  turn_id = changed_turn(turn_id)
  if not turn_id then
    return
  end
  if path and not path:match("^%s*$") then
    M.rewind_to(turn_id, true, false, { vim.trim(path) }, true)
    return
  end
  local files = {}
  local last = M.state.last_changes
  for _, entry in ipairs(require("shiro.chat").changes()) do
    if entry.turnId == turn_id then
      files = entry.files
    end
  end
  if #files == 0 and last and last.turnId == turn_id then
    files = last.files
  end
  local items = { { label = string.format("the whole turn (%d file%s)", #files, #files == 1 and "" or "s") } }
  for _, f in ipairs(files) do
    table.insert(items, { label = tostring(f.path) .. " (" .. tostring(f.change) .. ")", path = f.path })
  end
  vim.ui.select(items, {
    prompt = "Undo which change?",
    kind = "shiro_undo",
    format_item = function(i)
      return i.label
    end,
  }, function(choice)
    if choice then
      M.rewind_to(turn_id, true, false, choice.path and { choice.path } or nil, true)
    end
  end)
end

M.EFFORTS = { "minimal", "low", "medium", "high", "default" }

--- `:ShiroEffort [level]`: report or set the reasoning effort (from the next request on).
function M.effort(level)
  local arg = {}
  if level and not level:match("^%s*$") then
    arg.effort = vim.trim(level)
  end
  M.execute(wire.commands.effort, arg, function(err, result)
    if err or not result then
      return
    end
    local effort = is_nil(result.effort) and "the endpoint's default" or tostring(result.effort)
    notify(string.format("reasoning effort: %s (model %s)", effort, tostring(result.model)))
  end)
end

function M.show_status()
  M.execute(wire.commands.status, {}, function(err, result)
    if err or not result then
      return
    end
    M.state.status = result
    local cost = is_nil(result.costUsd) and "n/a" or string.format("$%.4f", result.costUsd)
    local effort = is_nil(result.effort) and "" or (", effort " .. tostring(result.effort))
    notify(string.format("%s  %s/%s tokens of context, model %s%s, in %s out %s, cost %s",
      (M.statusline()), tostring(result.contextTokens), tostring(result.contextThreshold),
      tostring(result.model), effort, tostring(result.inputTokens), tostring(result.outputTokens), cost))
  end)
end

-- ---------------------------------------------------------------------------------------------
-- statusline

--- "shiro 12.3%" (plus " …" while a turn runs and " +N" for queued prompts) and the level
--- (normal | amber | red); "" before the first status.
function M.statusline()
  local s = M.state.status
  if not s then
    return "", nil
  end
  local text = string.format("shiro %.1f%%", tonumber(s.contextPercent) or 0)
  if s.running == true then
    text = text .. " …"
  end
  local queued = tonumber(s.queued) or 0
  if queued > 0 then
    text = text .. " +" .. queued
  end
  if s.mode == "plan" then
    text = text .. " [plan]"
  end
  return text, s.level
end

--- The same for a 'statusline' item that expands % codes (`%{%...%}` or `%!`): coloured by level.
function M.statusline_component()
  local text, level = M.statusline()
  if text == "" then
    return ""
  end
  local group = ({ amber = "ShiroStatusAmber", red = "ShiroStatusRed" })[level] or "ShiroStatusNormal"
  return "%#" .. group .. "#" .. text:gsub("%%", "%%%%") .. "%*"
end

return M
