"""The xlnel version, in a module of its own so that any module can read it without importing
the package's top level (which imports the pipeline)."""

__version__ = "0.1.0"
