"""One module per `dshc` command, each exporting `add_parser(sub)` and `run(args, out, err) -> int`;
`cli/main.py`'s `COMMANDS` table lists them and imports one only when its command runs."""
