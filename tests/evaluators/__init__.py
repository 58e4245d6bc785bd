"""Tests of the evaluators package."""
