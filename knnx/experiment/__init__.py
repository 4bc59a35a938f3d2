"""The experiment engine: a validated spec's cells run, cached, resumed and written
as tidy rows (``runner``)."""
