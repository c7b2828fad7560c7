"""Code mode's executor: a run_code program (TypeScript body + the view's SDK names) → a Node
worker under the process sandbox whose `tools.*` calls come back over a framed channel and
re-enter the full pipeline; out: `{value?, logs[], error?}`."""
