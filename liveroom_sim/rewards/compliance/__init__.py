"""Compliance read by concept: rule families as combinations of concepts (:mod:`.concepts`)
and the claims the world may make true, checked against the market (:mod:`.world`)."""
