"""The version of localjudge, in a module of its own: every record and report names it, and the
modules that do import it from here, never from the package root."""

__version__ = "0.1.0"
