-- `shiro/approve` (the plugin sets capabilities.experimental.shiro.approvals): the edit's diff in a
-- float before the choice, the whole change in a diff tab on demand, and a denial that carries a
-- reason for the model (docs/protocol.md "Approvals", docs/neovim.md "Approvals").

local A = {}

local api = vim.api

-- the workspace trust question arrives as an approval of this pseudo tool (server/protocol.py TRUST_TOOL)
local TRUST_TOOL = "trust"
local MAX_FLOAT_SHARE = 0.5 -- the diff float takes at most half the screen's height

local view = { float = nil, tab = nil }

local function is_nil(v)
  return v == nil or v == vim.NIL
end

--- Run `start(done)`, which calls `done(value)` once (now or later), and return that value. Neovim
--- 0.10+ runs server requests in a coroutine, so an asynchronous picker can answer later; before
--- that the answer has to come back at once (the built-in vim.ui.select and vim.ui.input do).
--- Returns answered (false: it did not answer synchronously outside a coroutine) and the value.
local function await(start)
  local co, main = coroutine.running()
  local value, answered, parked = nil, false, false
  start(function(v)
    if answered then
      return
    end
    value, answered = v, true
    if parked then
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end
  end)
  if not answered and co and not main then
    parked = true
    coroutine.yield()
  end
  return answered, value
end
A.await = await

local function scratch(name, lines, filetype)
  local buf = api.nvim_create_buf(false, true)
  pcall(api.nvim_buf_set_name, buf, name)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  if filetype and filetype ~= "" then
    vim.bo[buf].filetype = filetype
  end
  return buf
end

--- "shiro-neko wants to …", or "shiro-neko's task subagent wants to …" for a call of a `task`
--- subagent (`parentToolCallId`): the user may not have seen that task start.
function A.request_text(params)
  local who = is_nil(params.parentToolCallId) and "shiro-neko" or "shiro-neko's task subagent"
  return who .. " wants to " .. tostring(params.title)
end

local function diff_lines(diff)
  local lines = vim.split(tostring(diff), "\n", { plain = true })
  if lines[#lines] == "" then
    table.remove(lines)
  end
  return lines
end

function A.close_float()
  if view.float and api.nvim_win_is_valid(view.float) then
    pcall(api.nvim_win_close, view.float, true)
  end
  view.float = nil
end

local function close_tab()
  if view.tab and api.nvim_tabpage_is_valid(view.tab) then
    for _, w in ipairs(api.nvim_tabpage_list_wins(view.tab)) do
      pcall(api.nvim_win_close, w, true)
    end
  end
  view.tab = nil
end

--- The float with the call's diff (the server's capped unified diff), above everything at the top
--- of the screen; it closes when the question is answered.
function A.show_float(params)
  A.close_float()
  local lines = diff_lines(params.diff)
  local head = A.request_text(params)
  local total = tonumber(params.diffLines) or #lines
  if total > #lines then
    head = head .. string.format("  (%d diff lines)", total)
  end
  table.insert(lines, 1, head)
  local buf = scratch("shiro://approval", lines, "diff")
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  width = math.min(width + 1, math.max(20, vim.o.columns - 4))
  local height = math.max(1, math.min(#lines, math.floor((vim.o.lines - 2) * MAX_FLOAT_SHARE)))
  view.float = api.nvim_open_win(buf, false, {
    relative = "editor",
    anchor = "NW",
    row = 0,
    col = 1,
    width = width,
    height = height,
    style = "minimal",
    border = "rounded",
    focusable = true,
    zindex = 60,
  })
  vim.wo[view.float].wrap = false
  return view.float
end

local function file_lines(path)
  local bufnr = vim.fn.bufnr(path)
  if bufnr ~= -1 and api.nvim_buf_is_loaded(bufnr) then
    return api.nvim_buf_get_lines(bufnr, 0, -1, false)
  end
  if vim.fn.filereadable(path) == 1 then
    return vim.fn.readfile(path)
  end
  return {}
end

--- The whole change in a new tab: the file as it is now beside the file as the call would leave
--- it, in diff mode (`q` closes the tab); without a preview, the server's unified diff. Calls
--- `closed()` once the tab is gone.
function A.show_whole(params, closed)
  close_tab()
  vim.cmd("tabnew")
  view.tab = api.nvim_get_current_tabpage()
  local wins = {}
  local preview = params.preview
  if not is_nil(preview) and type(preview) == "table" then
    local path = tostring(preview.path)
    -- vim.filetype.match takes a table from 0.8 on; 0.7's takes other arguments: plain text there
    local ok, ft = pcall(function()
      return vim.filetype.match({ filename = path })
    end)
    ft = (ok and type(ft) == "string") and ft or ""
    local new = vim.split(tostring(preview.newText), "\n", { plain = true })
    if new[#new] == "" then
      table.remove(new)
    end
    local short = vim.fn.fnamemodify(path, ":~:.")
    local before = scratch("shiro://now/" .. short, file_lines(path), ft)
    local after = scratch("shiro://proposed/" .. short, new, ft)
    api.nvim_win_set_buf(0, before)
    vim.cmd("diffthis")
    table.insert(wins, api.nvim_get_current_win())
    vim.cmd("rightbelow vsplit")
    api.nvim_win_set_buf(0, after)
    vim.cmd("diffthis")
    table.insert(wins, api.nvim_get_current_win())
  else
    api.nvim_win_set_buf(0, scratch("shiro://approval/diff", diff_lines(params.diff or ""), "diff"))
    table.insert(wins, api.nvim_get_current_win())
  end
  local done = false
  local function finish()
    if done then
      return
    end
    done = true
    vim.schedule(function()
      close_tab()
      if closed then
        closed()
      end
    end)
  end
  for _, w in ipairs(wins) do
    local buf = api.nvim_win_get_buf(w)
    vim.keymap.set("n", "q", finish, { buffer = buf, silent = true, desc = "shiro: back to the approval" })
    api.nvim_create_autocmd("WinClosed", { pattern = tostring(w), once = true, callback = finish })
  end
  return wins
end

local function select(items, opts)
  local answered, choice = await(function(done)
    vim.ui.select(items, opts, function(item)
      done(item)
    end)
  end)
  if not answered then
    vim.notify("shiro: this Neovim needs a synchronous vim.ui.select for approvals; answered Deny", vim.log.levels.WARN)
  end
  return choice
end

local function trust(params)
  local items = { { title = "Trust", decision = "allow" }, { title = "Don't trust", decision = "deny" } }
  local choice = select(items, {
    prompt = tostring(params.title),
    kind = "shiro_trust",
    format_item = function(i)
      return i.title
    end,
  })
  if not choice then
    return vim.NIL -- "not now": asked again at the next start
  end
  return { decision = choice.decision }
end

--- The items of the approval menu.
function A.items(params)
  local items = { { title = "Allow", decision = "allow" } }
  -- "always": the session, this folder or the user keeps the call's rule (permissions.lua)
  vim.list_extend(items, require("shiro.permissions").always_items())
  vim.list_extend(items, {
    { title = "Deny", decision = "deny" },
    { title = "Deny with reason…", decision = "deny", ask_reason = true },
  })
  if not is_nil(params.diff) and params.diff ~= "" then
    table.insert(items, { title = "Show the whole diff", whole = true })
  end
  return items
end

--- The answer to one `shiro/approve` request: `{decision, reason?}`, or vim.NIL for "not now".
function A.handle(params)
  if type(params) ~= "table" then
    return { decision = "deny" }
  end
  if params.toolName == TRUST_TOOL then
    return trust(params)
  end
  local has_diff = not is_nil(params.diff) and params.diff ~= ""
  require("shiro.permissions").on_approval(params.title)
  local opts = {
    prompt = A.request_text(params),
    kind = "shiro_approval",
    format_item = function(i)
      return i.title
    end,
  }
  local ok, answer = pcall(function()
    local tab_open = false -- the whole diff is on screen: no float over it
    while true do
      if has_diff and not tab_open and not (view.float and api.nvim_win_is_valid(view.float)) then
        A.show_float(params)
        pcall(vim.cmd, "redraw")
      end
      local choice = select(A.items(params), opts)
      if not choice then
        return { decision = "deny" } -- dismissed: a deny, as docs/protocol.md says
      end
      if not choice.whole then
        if choice.ask_reason then
          local _, reason = await(function(done)
            vim.ui.input({ prompt = "Reason for the model: " }, function(text)
              done(text)
            end)
          end)
          reason = type(reason) == "string" and vim.trim(reason) or ""
          if reason ~= "" then
            return { decision = "deny", reason = reason }
          end
        end
        return { decision = choice.decision, scope = choice.scope }
      end
      A.close_float()
      -- the tab stays open while the question waits (in a coroutine); without one the menu comes
      -- back at once over the diff tab
      local co, main = coroutine.running()
      if co and not main then
        await(function(done)
          A.show_whole(params, function()
            done(true)
          end)
        end)
      else
        A.show_whole(params, nil)
        tab_open = true
      end
    end
  end)
  A.close_float()
  close_tab()
  if not ok then
    vim.notify("shiro: approval failed, answered Deny: " .. tostring(answer), vim.log.levels.ERROR)
    return { decision = "deny" }
  end
  return answer
end

return A
