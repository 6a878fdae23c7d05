"""Development scaffolding kept apart from the core: the generated sample world, the tiny offline models, the speed
benchmarks and the demo. The core packages never import from here."""
