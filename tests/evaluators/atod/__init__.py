"""Tests of evaluators.atod."""
