"""Bundled example datasets for localjudge (shipped as package data)."""
