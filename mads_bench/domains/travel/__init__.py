"""Travel assistant: flight search, bookings, changes, baggage and hotel stays."""
