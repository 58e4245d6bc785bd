"""Tests of simulation.backends: registry, fake, transformers and OpenAI-compatible backends."""
