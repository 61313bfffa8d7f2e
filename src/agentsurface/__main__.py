"""``python -m agentsurface`` runs the ``agentsurface`` command."""

import sys

from agentsurface.cli import main

if __name__ == "__main__":  # importing the module (tools that walk the package) runs nothing
    sys.exit(main())
