"""Text read as a person reads it: numbers, dates and missing values in text columns.

The public face (the import builder, and re-typing a column, use these):

- ``read_as_meant(target, tables)`` (``reading``): after a source's tables are made,
  convert the text columns that hold numbers or dates, noting each one's original
  form, format and description on the target, and warning about what stays text;
- ``conversion_sql(text_sql, sql_type, format)`` (``formats``): the SQL that reads a
  text as a type under a named format (the vocabulary is in ``formats``), NULL for a
  missing marker or a value that does not read;
- ``missing_sql``/``trimmed_sql``/``MARKERS`` (``missing``): the missing-value markers.

Conventions are inferred per column from all its values (``numbers``, ``dates``), and an
ambiguous column is decided by its source's other columns (``evidence``).
"""
from engine.datasets.meaning.formats import conversion_sql, number_formats
from engine.datasets.meaning.missing import MARKERS, is_missing, missing_sql, trimmed_sql
from engine.datasets.meaning.reading import read_as_meant

__all__ = ["MARKERS", "conversion_sql", "is_missing", "missing_sql", "number_formats",
           "read_as_meant", "trimmed_sql"]
