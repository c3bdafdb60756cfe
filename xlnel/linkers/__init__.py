"""linkers stage."""
