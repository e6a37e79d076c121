"""`python -m localjudge` runs the command line."""

from localjudge.cli import main

main()
