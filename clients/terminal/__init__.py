"""`shiro`: the terminal client. A plain LSP client of `shiro-lsp` (started as a subprocess)."""
