"""Importers of released scores and closed models' answers (formats per benchmark in the registry)."""
