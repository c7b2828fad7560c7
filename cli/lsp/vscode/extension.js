// Starts `dshc lsp` for .dsh files; everything the editor shows comes from that server.
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration("dshc");
  const server = {
    command: config.get("path", "dshc"),
    args: ["lsp", ...config.get("args", [])],
    transport: TransportKind.stdio, // the client adds --stdio, which `dshc lsp` accepts
  };
  const clientOptions = { documentSelector: [{ scheme: "file", language: "dsh" }] };
  client = new LanguageClient("dshc", "dshc language server", server, clientOptions);
  context.subscriptions.push({ dispose: () => client && client.stop() });
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
