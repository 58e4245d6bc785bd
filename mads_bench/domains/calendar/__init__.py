"""Calendar assistant: events, invitations, colleagues' availability and meeting rooms."""
