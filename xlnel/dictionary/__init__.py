"""dictionary stage."""
