"""Stand-ins for standard-library modules that are slow to import (json, hashlib), for the processes
spawned per tool call; every layer may import them, and they import nothing of dshc."""
