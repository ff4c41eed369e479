-- shiro-neko: define the :Shiro* commands. Nothing starts until one of them (or setup()) is used.
if vim.g.loaded_shiro or vim.fn.has("nvim-0.7") == 0 then
  return
end
vim.g.loaded_shiro = true
require("shiro.commands").define()
