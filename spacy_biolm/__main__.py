"""`python -m spacy_biolm ...`: the CLI with the running interpreter (what project.yml uses)."""

from .cli import main

main()
