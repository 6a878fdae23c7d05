"""Scoring: model adapters, protocol prompts, the runner that writes run stores, and importers of released scores."""
