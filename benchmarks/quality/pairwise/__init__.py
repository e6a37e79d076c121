"""Pairwise preference from likelihood against human-labelled pairs."""
