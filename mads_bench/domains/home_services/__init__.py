"""Home services assistant: plumbing, electrical, HVAC, cleaning and repair appointments."""
