"""`python -m dshc.runtime.sandbox`: print what confinement this machine offers, as JSON."""
import json
from dataclasses import asdict

from .probe import probe

print(json.dumps(asdict(probe()), indent=2))
