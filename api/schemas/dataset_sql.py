"""Request and response shapes of POST /v1/datasets/{id}/sql."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from api.services.dataset_sql import MAX_SQL_CHARS


class SqlRun(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sql: str = Field(min_length=1, max_length=MAX_SQL_CHARS,
                     description="One read-only DuckDB SELECT statement.")


class SqlResult(BaseModel):
    dataset_id: str | None
    dataset_version: int | None
    sql: str = Field(description="The statement as it ran.")
    rows: int = Field(description="Rows in the whole result.")
    text: str = Field(description="The result as the model's execute_sql tool gets it: "
                                  "CSV, the first rows, then a summary over all rows.")
