"""How text reads as numbers, dates and missing values (a minimal stand-in: see formats)."""
