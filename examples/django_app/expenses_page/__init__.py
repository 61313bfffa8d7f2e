"""The expense tracker's page, run by agentsurface.js under Pyodide (plain files beside the
project, served at /expenses_page/; it imports nothing of Django)."""
