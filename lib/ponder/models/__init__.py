"""Neural network modules, one idea per file."""
