"""Retail-banking domain: accounts, cards, payees, transfers and disputes."""
