"""ner stage."""
