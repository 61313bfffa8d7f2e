"""``python -m agent_surface`` runs the ``agent-surface`` command."""

import sys

from agent_surface.cli import main

if __name__ == "__main__":  # importing the module (tools that walk the package) runs nothing
    sys.exit(main())
