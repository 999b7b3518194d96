"""Everything the window runs in the background, each under one convention (`base.Worker`)."""
