-- Headless Neovim (0.7.2: vim.lsp.start_client, push diagnostics only) as a real LSP client of the
-- bitexact language server. Opens each file, waits until the server has published diagnostics for
-- all of them and they have stayed unchanged for a moment, prints one line per file:
--   BITEXACT_DIAGNOSTICS <json {uri, version, diagnostics}>
-- and quits with status 0, or prints BITEXACT_TIMEOUT and quits with status 1.
--
-- Environment: BITEXACT_LSP_CMD (the server command, words separated by a tab), BITEXACT_ROOT (the
-- workspace folder), BITEXACT_FILES (absolute paths separated by a tab), BITEXACT_WAIT_MS.
local function split(s)
  local out = {}
  for part in string.gmatch(s or '', '[^\t]+') do table.insert(out, part) end
  return out
end

local function say(line)
  io.stdout:write(line .. '\n')
  io.stdout:flush()
end

local cmd = split(os.getenv('BITEXACT_LSP_CMD'))
local root = os.getenv('BITEXACT_ROOT')
local files = split(os.getenv('BITEXACT_FILES'))
local wait_ms = tonumber(os.getenv('BITEXACT_WAIT_MS') or '30000')
local quiet_ms = 400

local latest = {} -- uri -> last publishDiagnostics params
local last_publish = vim.loop.now()

local client_id = vim.lsp.start_client({
  name = 'bitexact',
  cmd = cmd,
  root_dir = root,
  workspace_folders = { { uri = vim.uri_from_fname(root), name = 'workspace' } },
  handlers = {
    ['textDocument/publishDiagnostics'] = function(_, result)
      if result then
        latest[result.uri] = result
        last_publish = vim.loop.now()
      end
    end,
  },
  on_exit = function(code, signal)
    if code ~= 0 then say(string.format('BITEXACT_SERVER_EXIT code=%s signal=%s', tostring(code), tostring(signal))) end
  end,
})
if not client_id then
  say('BITEXACT_TIMEOUT the client did not start')
  vim.cmd('cq!')
end
say(string.format('BITEXACT_CLIENT nvim %d.%d.%d', vim.version().major, vim.version().minor, vim.version().patch))

local uris = {}
for _, file in ipairs(files) do
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  vim.bo.filetype = 'python'
  vim.lsp.buf_attach_client(0, client_id)
  table.insert(uris, vim.uri_from_fname(file))
end

local function settled()
  for _, uri in ipairs(uris) do
    local p = latest[uri]
    if p == nil or #p.diagnostics == 0 then return false end
  end
  return vim.loop.now() - last_publish >= quiet_ms
end

local ok = vim.wait(wait_ms, settled, 50)
if ok then
  for _, uri in ipairs(uris) do
    say('BITEXACT_DIAGNOSTICS ' .. vim.fn.json_encode(latest[uri]))
  end
else
  local seen = {}
  for uri, p in pairs(latest) do table.insert(seen, uri .. ' (' .. #p.diagnostics .. ')') end
  say('BITEXACT_TIMEOUT published so far: ' .. table.concat(seen, ', '))
end

vim.lsp.stop_client(client_id)
vim.wait(3000, function() return vim.tbl_isempty(vim.lsp.get_active_clients()) end, 50)
vim.cmd(ok and 'qa!' or 'cq!')
