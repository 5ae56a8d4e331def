"""``python -m stpis_bridge``: run the bridge server."""

import sys

from stpis_bridge.server import main

if __name__ == "__main__":
    sys.exit(main())
