"""How far an answer can move the judge's score by talking to the judge."""
