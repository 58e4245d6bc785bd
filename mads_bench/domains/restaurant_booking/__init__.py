"""Restaurant booking: search restaurants, check tables, book, change and cancel reservations."""
