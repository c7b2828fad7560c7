"""The `dshc` command line and the session glue that joins the compiler to the runtime."""
