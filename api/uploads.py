"""File uploads streamed to disk, chunk by chunk, never held in memory.

Werkzeug's form parser writes each file part into the stream its ``stream_factory``
returns, as the bytes arrive. By default that is a spooled temporary file in the
system's temp dir; here, for requests that ask for it (``spool_uploads_to``), it is a
file in the data dir's ``uploads/`` folder, so that an accepted upload is renamed into
its dataset's folder (same file system) rather than copied. Files a request spooled
and did not keep are removed when the request ends, whatever the outcome (a 413 half
way, a validation error). A request may also ask for each file's SHA-256, computed as
its bytes are written (an ``Idempotency-Key`` compares uploads by content) instead of
reading the file again afterwards.
"""
from __future__ import annotations

import contextlib
import hashlib
import tempfile
from pathlib import Path

from flask import Flask, Request, request
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.formparser import FormDataParser, default_stream_factory

from shared.errors import PayloadTooLarge

# Room for the form fields and the multipart framing on top of the files themselves.
FORM_OVERHEAD_BYTES = 1 << 20


class UploadRequest(Request):
    """Flask's request, whose file parts may be written straight into a given folder."""

    upload_dir: Path | None = None
    hash_uploads: bool = False

    def make_form_data_parser(self) -> FormDataParser:
        """Werkzeug's parser, as the request makes it, its files written by ``file_stream``."""
        return self.form_data_parser_class(
            stream_factory=self.file_stream,
            max_form_memory_size=self.max_form_memory_size,
            max_content_length=self.max_content_length,
            max_form_parts=self.max_form_parts,
            cls=self.parameter_storage_class,
        )

    def file_stream(self, total_content_length, content_type, filename=None,
                    content_length=None):
        """Where a file part is written: werkzeug's default, or a file in ``upload_dir``."""
        if self.upload_dir is None:
            return default_stream_factory(total_content_length, content_type, filename,
                                          content_length)
        self.upload_dir.mkdir(parents=True, exist_ok=True)
        handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 -- werkzeug writes and closes it
            dir=self.upload_dir, prefix=".upload-", suffix=".part", delete=False)
        self.spooled.append(Path(handle.name))
        return HashingFile(handle) if self.hash_uploads else handle

    @property
    def spooled(self) -> list[Path]:
        """Files this request wrote (its file parts, in order)."""
        if "_spooled" not in self.__dict__:
            self.__dict__["_spooled"] = []
        return self.__dict__["_spooled"]


class HashingFile:
    """A spooled file that hashes what is written to it: ``sha256`` is the digest of
    its contents once werkzeug has written them. Everything else is the file's."""

    def __init__(self, handle) -> None:
        self._handle = handle
        self.sha256 = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.sha256.update(data)
        return self._handle.write(data)

    def __getattr__(self, name: str):
        return getattr(self._handle, name)


def file_digest(stream) -> bytes:
    """The SHA-256 of a spooled file part: hashed as it arrived when the request asked
    for it (``spool_uploads_to(..., hashed=True)``), else read back from disk."""
    if isinstance(stream, HashingFile):
        return stream.sha256.digest()
    with open(stream.name, "rb") as f:
        return hashlib.file_digest(f, "sha256").digest()


def spool_uploads_to(folder: Path, limit_bytes: int, *, hashed: bool = False) -> None:
    """Make this request's file parts go to ``folder``, and allow a body of up to
    ``limit_bytes`` of files (the API's usual body limit is small); with ``hashed``,
    hash each part as it is written (``file_digest``). Call before touching
    ``request.form`` or ``request.files``."""
    request.upload_dir = folder
    request.hash_uploads = hashed
    request.max_content_length = limit_bytes + FORM_OVERHEAD_BYTES


def parse_form(limit_mb: int):
    """``(request.form, request.files)``; raises PayloadTooLarge past the limit."""
    try:
        return request.form, request.files
    except RequestEntityTooLarge:
        raise PayloadTooLarge(f"The upload is larger than the {limit_mb:,} MB limit "
                              "(SUNRISE_MAX_UPLOAD_MB); nothing was kept.",
                              limit_mb=limit_mb) from None


def init_app(app: Flask) -> None:
    app.request_class = UploadRequest

    @app.teardown_request
    def _remove_unkept(_exc) -> None:
        for path in request.spooled if isinstance(request, UploadRequest) else ():
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
