"""Tests of xlnel.candidates."""
