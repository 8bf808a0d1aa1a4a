"""Request and response shapes of /v1/datasets."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints, field_validator, model_validator

from api.schemas.common import ListQuery, Strict, not_blank
from shared.dataset_annotations import DatasetNotes
from shared.dataset_corrections import TableCorrections, TablePatch

MAX_NAME_CHARS = 200
# What the JSON form reads: PostgreSQL or MariaDB/MySQL, any driver SQLAlchemy knows, and
# (live only) Spark SQL over Spark Connect.
DATABASE_URL_PATTERN = r"^(postgresql|mysql|mariadb|sc)(\+[A-Za-z0-9_]+)?://"
LIVE_ONLY_SCHEMES = ("sc://",)

Name = Annotated[str, StringConstraints(min_length=1, max_length=MAX_NAME_CHARS)]


class DatabaseSourceIn(Strict):
    url: Annotated[str, StringConstraints(min_length=1, max_length=2000,
                                          pattern=DATABASE_URL_PATTERN)] = Field(
        description="SQLAlchemy URL of a PostgreSQL or MariaDB/MySQL database, e.g. "
        "postgresql://user:password@host:5432/db. Never returned or logged.")
    tables: list[Annotated[str, StringConstraints(min_length=1, max_length=300)]] | None = Field(
        default=None, min_length=1, max_length=1000,
        description="schema.table or table names (Spark: catalog.schema.table too); omit "
        "for every table of the default schema.")
    mode: Literal["snapshot", "live"] = Field(
        default="snapshot", description="snapshot: copy the tables into a version of "
        "their own (refresh to copy again); live: keep no copy and run every query on the "
        "source, in its own SQL dialect (a version is the schema and profile as "
        "introspected).")
    allow_writable_role: bool = Field(
        default=False, description="Live only: accept a role that can write (the dataset "
        "then carries a warning). Without it such a role is refused (422) naming one "
        "privilege it has.")

    @model_validator(mode="after")
    def _live_only_options(self) -> DatabaseSourceIn:
        if self.mode != "live":
            if self.url.startswith(LIVE_ONLY_SCHEMES):
                raise ValueError("url: Spark Connect (sc://) sources are live only; send "
                                 "\"mode\": \"live\"")
            if self.allow_writable_role:
                raise ValueError("allow_writable_role applies to live datasets only")
        return self


class DatasetCreate(Strict):
    """The JSON form: a live database, copied (``mode`` snapshot, the default) or asked
    where it lives (``live``). (Files come as multipart/form-data: a ``name`` field and
    one or more ``file`` parts.)"""

    name: Name
    source: DatabaseSourceIn

    _blank = field_validator("name")(not_blank)


class RefreshIn(Strict):
    """When to refresh: a five-field cron read on the wall clock of ``timezone``."""

    cron: Annotated[str, StringConstraints(min_length=1, max_length=100)] = Field(
        description="minute hour day month weekday, e.g. '0 6 * * *'; at most every 5 "
        "minutes.")
    timezone: Annotated[str, StringConstraints(min_length=1, max_length=64)] = Field(
        default="UTC", description="An IANA time zone, e.g. 'Europe/Berlin'.")


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


class SuggestionOut(BaseModel):
    type: str = Field(description="The type to re-type the column as, e.g. \"DATE\".")
    format: str | None = Field(default=None, description="The format to read its text with, "
                               "e.g. \"%d/%m/%Y\" or \"decimal_comma\".")
    label: str = Field(description="The offer as a person reads it.")


class ColumnOut(BaseModel):
    name: str
    type: str = Field(description="The column's type: DuckDB's for a snapshot, the "
                      "engine's own for a live dataset.")
    description: str | None = Field(description="What people wrote about the column, else "
                                    "what the import says of it (e.g. how percents are stored).")
    original: str | None = Field(default=None, description="The form the values had in the "
                                 "source when the import converted them, e.g. "
                                 "\"text like `$1,017.87`\".")
    format: str | None = Field(default=None, description="How converted values were read, "
                               "e.g. \"decimal_comma\" or \"%d/%m/%Y\".")
    suggestion: SuggestionOut | None = Field(default=None, description="For a text column "
                                             "that looks like numbers or dates but was not "
                                             "converted: the re-type to offer.")
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


class ExampleOut(BaseModel):
    question: str
    sql: str


class SourceOut(BaseModel):
    file: str | None = None
    url: str | None = Field(default=None, description="The database URL, password masked.")
    tables: list[str] | None = None


class EngineOut(BaseModel):
    name: str = Field(description="e.g. DuckDB, PostgreSQL, MariaDB, Spark.")
    version: str | None = Field(description="The server's version, as it reports it.")
    dialect: str = Field(description="The SQL dialect the model writes.")


class RefreshOut(BaseModel):
    cron: str
    timezone: str


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
    glossary: dict[str, str]
    examples: list[ExampleOut]
    corrections: dict[str, TableCorrections] = Field(
        default_factory=dict, description="What people corrected, per table: re-typed "
        "columns and layouts, applied by every import of the dataset (PATCH sets them).")
    sources: list[SourceOut]
    mode: Literal["snapshot", "live"] = Field(description="snapshot: jobs read a copy (a "
                                              "DuckDB file per version); live: jobs query "
                                              "the source.")
    engine: EngineOut | None = Field(description="The engine jobs' SQL runs on (DuckDB for "
                                     "snapshots); null for a live dataset before its "
                                     "first introspection.")
    refresh: RefreshOut | None = Field(description="The refresh schedule; null: refreshed "
                                       "only when asked.")
    next_refresh_at: str | None = Field(description="ISO 8601 (UTC): the next scheduled "
                                        "refresh.")
    access: DatasetAccess | None = Field(default=None, description="Who may ask it besides "
                                         "admins and owners; null: the whole tenant.")
    warnings: list[str] = Field(description="What the last import found worth saying: "
                                "the dataset's own (e.g. a live source's role that can "
                                "write), then each table's as \"<table>: <message>\" (e.g. a "
                                "column of ambiguous dates kept as text).")
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


AccessName = Annotated[str, StringConstraints(min_length=1, max_length=200)]


class DatasetAccess(Strict):
    """Who may ask the dataset besides admins and owners: members of any of ``groups``
    and the users listed by external id in ``users``."""

    groups: list[AccessName] = Field(default_factory=list, max_length=500)
    users: list[AccessName] = Field(default_factory=list, max_length=500)


class DatasetPatch(DatasetNotes):
    """Annotations (each key given replaces that part; ``tables`` per table), corrections,
    ``default``: true makes this the tenant's default dataset, false stops it being, and
    ``refresh``: a schedule, or null for none.

    In a table's part a column given as text is its description; as ``{"type",
    "format"}`` a re-type, and ``header_row``/``skip_footer`` a layout (CSV and Excel):
    either makes a new version (202), each re-type checked on every value first (a value
    that does not convert is a 422 naming its row). Corrections are kept per column and
    key until changed (``{"type": null}``, ``"header_row": null`` drop one) and every
    refresh applies them; a part with only corrections leaves the table's descriptions
    as they are."""

    tables: dict[str, TablePatch] = Field(default_factory=dict, max_length=5000)
    default: bool | None = None
    refresh: RefreshIn | None = Field(default=None, description="Refresh on this schedule "
                                      "(a new version each time; the current one serves "
                                      "until it is ready, and stays when a refresh "
                                      "fails); null: no schedule.")
    access: DatasetAccess | None = Field(default=None, description="Who may ask it "
                                         "(admins and owners always may); null: the whole "
                                         "tenant. Admins only.")


class ImportProgressEvent(BaseModel):
    """How far the import got: rows copied into ``table`` so far (null while DuckDB reads
    a whole file, which reports ``percent``), ``done`` once the table is complete."""

    version: int
    table: str
    rows: int | None
    done: bool
    percent: float | None
    total_rows: int
