"""Stand-ins for standard-library modules that are slow to import (json, hashlib), for the processes
spawned per tool call, and what both the compiler and the runtime read (`hosts`: one spelling per network host);
every layer may import them, and they import nothing of dshc."""
