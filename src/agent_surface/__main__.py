"""``python -m agent_surface`` runs the ``agent-surface`` command."""

import sys

from agent_surface.cli import main

sys.exit(main())
