"""candidates stage."""
