"""`dshc lsp`: a language server for .dsh files (pygls over stdio) and its VS Code extension folder."""
