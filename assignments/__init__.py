"""Assignment folders: assignment.toml and the Jinja templates of each assignment (data only)."""
