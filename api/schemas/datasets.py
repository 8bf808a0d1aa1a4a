"""Request and response shapes of /v1/datasets."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints, field_validator

from api.schemas.common import ListQuery, Strict, not_blank
from shared.dataset_annotations import DatasetNotes
from shared.dataset_corrections import TableCorrections, TablePatch

MAX_NAME_CHARS = 200
# What the JSON form snapshots: PostgreSQL or MariaDB/MySQL, any driver SQLAlchemy knows.
DATABASE_URL_PATTERN = r"^(postgresql|mysql|mariadb)(\+[A-Za-z0-9_]+)?://"

Name = Annotated[str, StringConstraints(min_length=1, max_length=MAX_NAME_CHARS)]


class DatabaseSourceIn(Strict):
    url: Annotated[str, StringConstraints(min_length=1, max_length=2000,
                                          pattern=DATABASE_URL_PATTERN)] = Field(
        description="SQLAlchemy URL of a PostgreSQL or MariaDB/MySQL database, e.g. "
        "postgresql://user:password@host:5432/db. Never returned or logged.")
    tables: list[Annotated[str, StringConstraints(min_length=1, max_length=300)]] | None = Field(
        default=None, min_length=1, max_length=1000,
        description="schema.table or table names; omit for every table of the default schema.")


class DatasetCreate(Strict):
    """The JSON form: a snapshot of a live database. (Files come as multipart/form-data:
    a ``name`` field and one or more ``file`` parts.)"""

    name: Name
    source: DatabaseSourceIn

    _blank = field_validator("name")(not_blank)


class DatasetUpload(BaseModel):
    """multipart/form-data: ``name`` and one or more ``file`` parts (CSV/TSV, Parquet,
    JSON/NDJSON, .xlsx, SQLite, DuckDB), each becoming tables named after it."""

    name: Name
    file: list[bytes] = Field(json_schema_extra={"items": {"type": "string",
                                                           "format": "binary"}})


class DatasetLinks(BaseModel):
    self: str
    events: str
    refresh: str


class DatasetAccepted(BaseModel):
    dataset_id: str
    status: Literal["importing"]
    version: int = Field(description="The version being imported.")
    links: DatasetLinks


class TopValueOut(BaseModel):
    value: Any
    count: int


class ColumnOut(BaseModel):
    name: str
    type: str = Field(description="The DuckDB type.")
    description: str | None = Field(description="What people wrote about the column, else "
                                    "what the import says of it (e.g. how percents are stored).")
    original: str | None = Field(default=None, description="The form the values had in the "
                                 "source when the import converted them, e.g. "
                                 "\"text like `$1,017.87`\".")
    format: str | None = Field(default=None, description="How converted values were read, "
                               "e.g. \"decimal_comma\" or \"%d/%m/%Y\".")
    null_fraction: float
    distinct: int
    min: Any
    max: Any
    top_values: list[TopValueOut]


class TableSummaryOut(BaseModel):
    name: str
    rows: int
    description: str | None = Field(description="What people wrote about the table, else "
                                    "what the import did to it (e.g. totals rows left out).")
    warnings: list[str] = Field(default_factory=list, description="What the import could "
                                "not read as a person would, and why (e.g. a column of "
                                "ambiguous dates kept as text).")


class TableOut(TableSummaryOut):
    columns: list[ColumnOut]


class ImportWarning(BaseModel):
    table: str
    message: str


class ExampleOut(BaseModel):
    question: str
    sql: str


class SourceOut(BaseModel):
    file: str | None = None
    url: str | None = Field(default=None, description="The database URL, password masked.")
    tables: list[str] | None = None


class DatasetOut(BaseModel):
    dataset_id: str
    name: str
    status: Literal["importing", "ready", "failed"]
    version: int | None = Field(description="The version jobs use now (null before the "
                                "first import ends); each refresh adds one.")
    default: bool = Field(description="Jobs of the tenant that name no dataset use it.")
    description: str | None
    error: dict[str, Any] | None = Field(description="Why the last import failed: a problem "
                                         "detail naming the file and line or row.")
    tables: list[TableOut]
    warnings: list[ImportWarning] = Field(default_factory=list, description="Every table's "
                                          "import warnings, in one list.")
    glossary: dict[str, str]
    examples: list[ExampleOut]
    corrections: dict[str, TableCorrections] = Field(
        default_factory=dict, description="What people corrected, per table: re-typed "
        "columns and layouts, applied by every import of the dataset (PATCH sets them).")
    sources: list[SourceOut]
    created_at: str | None
    updated_at: str | None
    links: DatasetLinks


class DatasetSummaryOut(DatasetOut):
    """A dataset in a list page: its tables without their columns (``GET
    /v1/datasets/{id}`` has them)."""

    tables: list[TableSummaryOut]


class DatasetUsage(BaseModel):
    """The tenant's quota use (every dataset of the tenant, not only this page's)."""

    datasets: int = Field(description="Datasets you have (deleted ones not counted).")
    bytes: int = Field(description="Bytes their sources and versions store.")
    max_datasets: int = Field(description="Your dataset limit; 0: unlimited. Past it "
                                          "creating a dataset is 429.")
    max_bytes: int = Field(description="Your stored-bytes limit; 0: unlimited. Past it an "
                                       "upload or a refresh is 413.")


class DatasetList(BaseModel):
    items: list[DatasetSummaryOut]
    next_cursor: str | None
    usage: DatasetUsage


class DatasetListQuery(ListQuery):
    limit: int = Field(default=100, ge=1, le=100)  # a page held every dataset before paging


class DatasetPatch(DatasetNotes):
    """Annotations (each key given replaces that part; ``tables`` per table), corrections
    and ``default``: true makes this the tenant's default dataset, false stops it being.

    In a table's part a column given as text is its description; as ``{"type",
    "format"}`` a re-type, and ``header_row``/``skip_footer`` a layout (CSV and Excel):
    either makes a new version (202), each re-type checked on every value first (a value
    that does not convert is a 422 naming its row). Corrections are kept per column and
    key until changed (``{"type": null}``, ``"header_row": null`` drop one) and every
    refresh applies them; a part with only corrections leaves the table's descriptions
    as they are."""

    tables: dict[str, TablePatch] = Field(default_factory=dict, max_length=5000)
    default: bool | None = None


class ImportProgressEvent(BaseModel):
    """How far the import got: rows copied into ``table`` so far (null while DuckDB reads
    a whole file, which reports ``percent``), ``done`` once the table is complete."""

    version: int
    table: str
    rows: int | None
    done: bool
    percent: float | None
    total_rows: int
