"""`python -m dshc.runtime.sandbox`: print what confinement this machine offers, as JSON."""

import json

from .probe import probe

print(json.dumps(probe().as_dict(), indent=2))
