"""simulation package."""
