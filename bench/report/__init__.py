"""Reports: the paper notebooks' shared functions, figure builders, and the papermill report builder."""
