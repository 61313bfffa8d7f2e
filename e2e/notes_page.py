"""The notes page's tool names (e2e/pages/agent-client.py), shared by the tests that drive it."""

NOTES, ADD, CLEAR, WAIT = (
    "view_notes__list__notes",
    "view_notes__list__add",
    "view_notes__list__clear",
    "view_notes__list__wait",
)
ARCHIVED = "view_notes__archive__archived"
LIST = sorted([NOTES, ADD, CLEAR, WAIT])
