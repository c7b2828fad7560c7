// Gemini CLI's own PolicyEngine (the pinned @google/gemini-cli-core) deciding tool calls under policy TOML
// files, for the differential tests of `dshc export gemini`. In (stdin, JSON): {"tables": [{"policy": PATH,
// "calls": [{"name", "args"}]}]}. Out (stdout, JSON): {"tables": [{"decisions": ["allow"|"ask_user"|"deny",
// …]} or {"errors": […]} when the file does not load cleanly]}. One process decides every table.
import { readFileSync } from "node:fs";
import { PolicyEngine, loadPoliciesFromToml, ApprovalMode } from "@google/gemini-cli-core";

// the engine's debug log writes to the console's stdout, which carries the answer
for (const name of ["log", "debug", "info", "warn"]) console[name] = () => {};
const request = JSON.parse(readFileSync(0, "utf-8"));
const tables = [];
for (const table of request.tables) {
  // tier 4: a user's policy file, as `~/.gemini/policies/*.toml` loads
  const loaded = await loadPoliciesFromToml([table.policy], () => 4);
  const errors = loaded.errors.filter((e) => e.severity !== "warning");
  if (errors.length) {
    tables.push({ errors });
    continue;
  }
  const engine = new PolicyEngine({ rules: loaded.rules, approvalMode: ApprovalMode.DEFAULT });
  const decisions = [];
  for (const call of table.calls) {
    decisions.push((await engine.check({ name: call.name, args: call.args }, undefined)).decision);
  }
  tables.push({ decisions });
}
process.stdout.write(JSON.stringify({ tables }));
