"""A subset held as Arrow columns, checked without turning ~250 MB of profiles into Python.

The published files are parquet with typed columns, so the structure the schema asks
for (every field present, every value a string, no nulls) can be checked column by
column: the types from the file's schema, the nulls from its footer statistics (or, when
those are missing or count empty lists, from the column itself). Only when a check
fails is the file read row by row through :class:`~prb_tasks.data.personalized_rb.schema.PRBRow`,
which raises the usual one-line error naming the file, the row, the id and the field;
so bad data reads exactly as before, and good data never builds a Python object per post.

The profile column (nearly all of the bytes) is read only when something asks for it:
the profile-aware variants to rank posts, or a profile-based RM baseline. Variants that
show no posts never decode it.

``.jsonl`` copies go through the row-by-row validation, one row at a time: only the
small fields and where each row's line starts are kept, and profiles are read back from
the file when asked for, so a ``.jsonl`` copy holds no more than a parquet one. The
hub's rows arrive already typed (and memory-mapped by ``datasets``) and are checked
column by column.

A scorer that needs one user's profile at a time (the ``bm25`` and ``embedding``
baselines) asks :meth:`SubsetTable.profile_texts`, which keeps one piece of
:data:`PIECE_ROWS` rows decoded, never the whole column.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from prb_tasks.data.errors import DataError
from prb_tasks.data.personalized_rb.reader import validate_rows, validated_rows
from prb_tasks.data.personalized_rb.schema import PRBRow, ProfilePost, RubricAspect
from prb_tasks.data.rawfiles import check_file, jsonl_rows_at, raw_rows

FIELDS = ("id", "question", "category", "profile", "rubric_aspects", "narrative", "chosen", "rejected")
#: Every column but the profile: a few MB for the whole benchmark.
SMALL_FIELDS = tuple(f for f in FIELDS if f != "profile")
_STRUCTS = {"profile": ("category", "id", "text"), "rubric_aspects": ("aspect", "evidence", "reason")}
#: Rows of profiles :meth:`SubsetTable.profile_texts` keeps decoded (about 6 MB on the full benchmark).
PIECE_ROWS = 64
_BOM = b"\xef\xbb\xbf"

#: Yields a subset's profile column ``rows`` rows at a time, starting at row ``first``.
Pieces = Callable[[int, int], Iterator[Any]]


@dataclass(frozen=True)
class PairRow:
    """One validated row without its profile (the profile stays in :class:`ProfileColumn`).

    Attributes mirror :class:`PRBRow`; ``rubric_aspects`` is a tuple.
    """

    id: str
    question: str
    category: str
    rubric_aspects: tuple[RubricAspect, ...]
    narrative: str
    chosen: str
    rejected: str


class ProfileColumn:
    """Every row's posts, as one Arrow ``list<struct<category, id, text>>`` array.

    Args:
        column: the profile column (one or more chunks), already checked.
    """

    def __init__(self, column: Any) -> None:
        import pyarrow as pa

        if isinstance(column, pa.ChunkedArray):
            array = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
        else:
            array = column
        self._array = array
        # Offsets into the (unsliced) values, so row i's posts are values[offsets[i]:offsets[i+1]].
        self._offsets = array.offsets.to_numpy()
        posts = array.values
        fields = {posts.type.field(i).name: i for i in range(posts.type.num_fields)}
        flat = posts.flatten()
        self._text = _plain_strings(flat[fields["text"]])
        self._id = flat[fields["id"]]
        self._category = flat[fields["category"]]

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def slice(self, start: int, stop: int) -> "ProfileColumn":
        """Rows ``start`` to ``stop`` (exclusive), without copying."""
        return ProfileColumn(self._array.slice(start, stop - start))

    def count(self, row: int) -> int:
        """Posts in ``row``'s profile."""
        return int(self._offsets[row + 1] - self._offsets[row])

    def texts(self, row: int) -> list[str]:
        """The post texts of ``row``, in profile order."""
        start, end = int(self._offsets[row]), int(self._offsets[row + 1])
        return self._text.slice(start, end - start).to_pylist()

    def posts(self, row: int, indices: Sequence[int]) -> list[ProfilePost]:
        """Posts ``indices`` (positions in the profile) of ``row``, as validated posts."""
        start = int(self._offsets[row])
        return [
            ProfilePost.model_construct(category=self._category[start + i].as_py(), id=self._id[start + i].as_py(),
                                        text=self._text[start + i].as_py())
            for i in indices
        ]

    def text_lists(self, start: int, stop: int) -> Any:
        """Rows ``start`` to ``stop`` (exclusive) as an Arrow ``list<string>`` of post texts
        (views into the column, not copies)."""
        import pyarrow as pa

        offsets = self._offsets[start:stop + 1]
        base = int(offsets[0])
        values = self._text.slice(base, int(offsets[-1]) - base)
        return pa.ListArray.from_arrays(pa.array(offsets - base, pa.int32()), values)

    def post_bytes(self, row: int) -> Iterator[memoryview]:
        """Each post text of ``row`` as UTF-8 bytes (views into the column, not copies)."""
        for start, end in zip(self._byte_offsets[self._offsets[row]:self._offsets[row + 1]].tolist(),
                              self._byte_offsets[self._offsets[row] + 1:self._offsets[row + 1] + 1].tolist()):
            yield self._bytes[start:end]

    @cached_property
    def _byte_offsets(self) -> np.ndarray:
        import pyarrow as pa

        kind = np.int64 if pa.types.is_large_string(self._text.type) else np.int32
        raw = np.frombuffer(self._text.buffers()[1], dtype=kind)
        return raw[self._text.offset:self._text.offset + len(self._text) + 1]

    @cached_property
    def _bytes(self) -> memoryview:
        data = self._text.buffers()[2]
        return memoryview(data if data is not None else b"")


class _Cursor:
    """One decoded piece of a subset's profile column, moved along as rows are asked for.

    Args:
        pieces: the subset's profile column, piece by piece from a given row.
        rows: rows per piece.
    """

    def __init__(self, pieces: Pieces, rows: int) -> None:
        self._pieces = pieces
        self._rows = rows
        self._iterator: Iterator[Any] | None = None
        self._start = 0
        self._piece: ProfileColumn | None = None

    def texts(self, row: int) -> tuple[str, ...]:
        """The post texts of ``row`` (see :meth:`SubsetTable.profile_texts`)."""
        if self._piece is None or not self._start <= row < self._start + len(self._piece):
            self._move(row)
        assert self._piece is not None
        return tuple(self._piece.texts(row - self._start))

    def _move(self, row: int) -> None:
        following = self._start + len(self._piece) if self._piece is not None else None
        self._piece = None  # dropped before the next is read: one piece at a time
        if self._iterator is None or following is None or not following <= row < following + self._rows:
            self._iterator, following = self._pieces(self._rows, row), row
        for raw in self._iterator:
            if row < following + len(raw):
                self._piece, self._start = ProfileColumn(raw), following
                return
            following += len(raw)
        self._iterator = None
        raise IndexError(f"prb: row {row} is past the end of the subset")


_DECODED: list["SubsetTable"] = []


class SubsetTable:
    """One subset of the benchmark, read and checked, in dataset order.

    Args:
        origin: where the rows came from (a folder, or ``repo:config``), for messages.
        columns: every field but ``profile``, checked.
        load_profiles: returns the checked profile column when first needed.
        profile_pieces: yields the checked profile column a given number of rows at a time,
            from a given row on.
        data_key: returns the identity of the data's content (file hashes or the hub's
            fingerprint), for caches of results derived from it; None when unknown.
    """

    def __init__(self, origin: str, columns: Any, load_profiles: Callable[[], Any],
                 profile_pieces: Pieces, data_key: Callable[[], str | None]) -> None:
        self.origin = origin
        self._columns = columns
        self._load_profiles = load_profiles
        self._profile_pieces = profile_pieces
        self._data_key = data_key
        self._cursor = _Cursor(profile_pieces, PIECE_ROWS)

    def __len__(self) -> int:
        return self._columns.num_rows

    @cached_property
    def data_key(self) -> str | None:
        """The content identity (computed once, on first use: hashing the files takes a moment)."""
        return self._data_key()

    @cached_property
    def rows(self) -> list[PairRow]:
        """Every row without its profile (cheap: no post is decoded)."""
        data = self._columns.select(list(SMALL_FIELDS)).to_pydict()
        aspects = [
            tuple(RubricAspect.model_construct(**item) for item in items)
            for items in data["rubric_aspects"]
        ]
        return [
            PairRow(i_d, q, c, a, n, ch, rj)
            for i_d, q, c, a, n, ch, rj in zip(
                data["id"], data["question"], data["category"], aspects, data["narrative"], data["chosen"],
                data["rejected"],
            )
        ]

    @cached_property
    def profiles(self) -> ProfileColumn:
        """Every row's posts; read on first use. Only one subset keeps its column decoded
        at a time (~100 MB each on the full benchmark): a scorer that walks the subsets
        one after the other never holds all three."""
        for other in _DECODED:
            if other is not self:
                other.release_profiles()
        _DECODED[:] = [self]
        return ProfileColumn(self._load_profiles())

    def profile_texts(self, row: int) -> tuple[str, ...]:
        """The post texts of ``row``, in profile order, holding one piece of rows decoded.

        Lookups of rows in order (a scorer walking the documents) read the column once;
        a row elsewhere starts reading again at that row.

        Args:
            row: the row's position in the subset.
        """
        if "profiles" in self.__dict__:  # decoded whole already (e.g. for ``full_rows``)
            return tuple(self.profiles.texts(row))
        return self._cursor.texts(row)

    def profile_batches(self, rows: int = 128) -> Iterator[tuple[int, ProfileColumn]]:
        """Every row's posts, ``rows`` rows at a time, as (first row, posts).

        Reads the column piece by piece unless it is decoded already, so only a piece is
        in memory at once (ranking all posts needs each row once, in order).
        """
        if "profiles" in self.__dict__:
            for start in range(0, len(self), rows):
                yield start, self.profiles.slice(start, min(start + rows, len(self)))
            return
        import pyarrow as pa

        start = 0
        for piece in self._profile_pieces(rows, 0):
            yield start, ProfileColumn(piece)
            start += len(piece)
        # The reader's buffers stay with Arrow's allocator otherwise (about 50 MB).
        pa.default_memory_pool().release_unused()

    def release_profiles(self) -> None:
        """Drop the decoded profile column (it is read again if asked for later) and hand
        its memory back to the system."""
        import pyarrow as pa

        self.__dict__.pop("profiles", None)
        pa.default_memory_pool().release_unused()

    def full_rows(self) -> list[PRBRow]:
        """Rows with their profiles as :class:`PRBRow` objects (already checked, not re-validated)."""
        profiles = self.profiles
        return [
            PRBRow.model_construct(
                id=row.id, question=row.question, category=row.category,
                profile=profiles.posts(i, range(profiles.count(i))),
                rubric_aspects=list(row.rubric_aspects), narrative=row.narrative,
                chosen=row.chosen, rejected=row.rejected,
            )
            for i, row in enumerate(self.rows)
        ]


# --------------------------------------------------------------------------- checks


def _plain_strings(array: Any) -> Any:
    """``array`` as Arrow ``string`` (large or small), whose buffers hold UTF-8 text."""
    import pyarrow as pa

    if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        return array
    return array.cast(pa.string())


def _is_text(kind: Any) -> bool:
    import pyarrow as pa

    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _type_ok(name: str, kind: Any) -> bool:
    """Whether an Arrow type can only hold values the schema accepts (nulls aside)."""
    import pyarrow as pa

    if name not in _STRUCTS:
        return _is_text(kind)
    if not (pa.types.is_list(kind) or pa.types.is_large_list(kind)):
        return False
    item = kind.value_type
    if not pa.types.is_struct(item):
        return False
    names = {item.field(i).name: item.field(i).type for i in range(item.num_fields)}
    return all(field in names and _is_text(names[field]) for field in _STRUCTS[name])


def _nulls(name: str, column: Any) -> int:
    """Nulls anywhere inside ``column`` that the schema forbids (list, item or field)."""
    import pyarrow as pa

    found = column.null_count
    if name not in _STRUCTS or found:
        return found
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    items = array.flatten()
    found += items.null_count
    wanted = set(_STRUCTS[name])
    for index, child in enumerate(items.flatten()):
        if items.type.field(index).name in wanted:
            found += child.null_count
    return found


def _footer_clean(path: Path, column: str) -> bool:
    """True when the parquet footer shows no null in any leaf of ``column``.

    Parquet counts an empty list as a null leaf too, so False only means "look".
    """
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    for group in range(meta.num_row_groups):
        row_group = meta.row_group(group)
        for index in range(row_group.num_columns):
            chunk = row_group.column(index)
            if chunk.path_in_schema.split(".")[0] != column:
                continue
            stats = chunk.statistics
            if stats is None or not stats.has_null_count or stats.null_count:
                return False
    return True


def _rows_checked(path: Path) -> Any:
    """Validate every row of ``path`` with pydantic (raises the one-line error) and
    return them as an Arrow table."""
    return _table_of(validate_rows(raw_rows(path), str(path)))


def _table_of(rows: Sequence[PRBRow]) -> Any:
    import pyarrow as pa

    return pa.Table.from_pylist([row.model_dump() for row in rows], schema=_schema())


def _schema(fields: Sequence[str] = FIELDS) -> Any:
    """The Arrow schema of the rows' ``fields`` as the checks leave them (plain strings)."""
    import pyarrow as pa

    def items(*names: str) -> Any:
        return pa.list_(pa.struct([(name, pa.string()) for name in names]))

    return pa.schema([(name, items(*_STRUCTS[name]) if name in _STRUCTS else pa.string()) for name in fields])


@dataclass(frozen=True)
class _Part:
    """One shard's checked columns, and two ways to its profile column.

    Attributes:
        small: every field but ``profile``.
        whole: returns the whole profile column.
        pieces: yields the profile column a given number of rows at a time, from a given row on.
    """

    small: Any
    whole: Callable[[], Any]
    pieces: Pieces


def _in_memory(small: Any, profile: Any) -> _Part:
    def pieces(rows: int, first: int) -> Iterator[Any]:
        for start in range(first, len(profile), rows):
            yield profile.slice(start, rows)

    return _Part(small, lambda: profile, pieces)


def _read_parquet(path: Path) -> _Part:
    """The small columns of one parquet file and access to its profile column, checked."""
    import pyarrow.parquet as pq

    try:
        schema = pq.ParquetFile(path).schema_arrow
        names = set(schema.names)
        if not all(f in names and _type_ok(f, schema.field(f).type) for f in FIELDS):
            raise _Slow
        small = pq.read_table(path, columns=list(SMALL_FIELDS))
        if small.num_rows == 0 or any(_nulls(f, small.column(f)) for f in SMALL_FIELDS):
            raise _Slow
        if _footer_clean(path, "profile"):
            def pieces(rows: int, first: int) -> Iterator[Any]:
                # Decoded piece by piece: a fraction of the memory of reading it whole.
                reader = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)
                groups, skip = _row_groups_from(reader.metadata, first)
                for batch in reader.iter_batches(batch_size=rows, row_groups=groups, columns=["profile"]):
                    column = batch.column(0)
                    if skip >= len(column):
                        skip -= len(column)
                        continue
                    yield column.slice(skip) if skip else column
                    skip = 0

            def whole() -> Any:
                import pyarrow as pa

                return pa.concat_arrays(list(pieces(4096, 0)))  # less memory than read_table

            return _Part(small, whole, pieces)
        profile = pq.read_table(path, columns=["profile"]).column("profile")
        if _nulls("profile", profile):
            raise _Slow
        return _in_memory(small, profile)
    except _Slow:
        pass
    except Exception as exc:  # pyarrow raises several unrelated types
        raise DataError(f"prb: cannot read parquet file {path}: {exc}") from exc
    table = _rows_checked(path)
    return _in_memory(table.select(list(SMALL_FIELDS)), table.column("profile"))


def _row_groups_from(meta: Any, first: int) -> tuple[list[int], int]:
    """The row groups of a parquet file from the one holding row ``first`` on, and how many
    rows of that group come before it.

    Args:
        meta: the file's metadata.
        first: a row of the file.
    """
    for group in range(meta.num_row_groups):
        size = meta.row_group(group).num_rows
        if first < size:
            return list(range(group, meta.num_row_groups)), first
        first -= size
    return [], 0


def _read_jsonl(path: Path) -> _Part:
    """The small columns of one ``.jsonl`` file, every row validated, and access to its
    profiles by reading their lines again (only the offsets of the lines are kept).

    Args:
        path: the file.
    """
    import pyarrow as pa

    starts: list[int] = []

    def rows() -> Iterator[dict[str, Any]]:
        for offset, item in jsonl_rows_at(path):
            starts.append(offset)
            yield item

    small = [row.model_dump(exclude={"profile"}) for row in validated_rows(rows(), str(path))]
    if not small:
        raise DataError(f"prb: {path} holds no rows")
    profile_type = _schema().field("profile").type

    def pieces(rows: int, first: int) -> Iterator[Any]:
        with path.open("rb") as handle:
            for start in range(first, len(starts), rows):
                stop = min(start + rows, len(starts))
                yield pa.array([_profile_at(handle, path, starts, n) for n in range(start, stop)], type=profile_type)

    def whole() -> Any:
        return pa.concat_arrays(list(pieces(4096, 0)))

    return _Part(pa.Table.from_pylist(small, schema=_schema(SMALL_FIELDS)), whole, pieces)


def _profile_at(handle: Any, path: Path, starts: Sequence[int], row: int) -> Any:
    """Row ``row``'s profile, read again from its line (checked when the file was first read)."""
    handle.seek(starts[row])
    try:
        return json.loads(handle.readline().removeprefix(_BOM).decode("utf-8"))["profile"]
    except (ValueError, KeyError, TypeError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise DataError(f"prb: {path} changed while it was being read (row {row + 1}: {exc}); run again") from None


class _Slow(Exception):
    """The fast checks could not vouch for a file: validate it row by row."""


def read_files(paths: Sequence[Path], origin: str) -> SubsetTable:
    """One subset from its shard files (``.parquet`` or ``.jsonl``), in shard order.

    Args:
        paths: the shards, in order (one format).
        origin: the folder, named in warnings.
    """
    import pyarrow as pa

    parts: list[_Part] = []
    for path in paths:
        check_file(path)
        if path.suffix == ".parquet":
            parts.append(_read_parquet(path))
        else:
            parts.append(_read_jsonl(path))
    columns = pa.concat_tables([part.small for part in parts], promote_options="permissive")

    def whole() -> Any:
        chunks = [part.whole() for part in parts]
        _common_type(chunks)
        return pa.chunked_array([c for column in chunks for c in _chunks(column)])

    def pieces(rows: int, first: int) -> Iterator[Any]:
        for part in parts:
            size = part.small.num_rows
            if first < size:
                yield from part.pieces(rows, first)
            first = max(0, first - size)

    return SubsetTable(origin, columns, whole, pieces, lambda: _files_key(paths))


def _chunks(column: Any) -> list[Any]:
    import pyarrow as pa

    return column.chunks if isinstance(column, pa.ChunkedArray) else [column]


def _common_type(columns: Sequence[Any]) -> Any:
    first = columns[0].type
    if any(c.type != first for c in columns):
        raise DataError("prb: the shards of one subset store their profiles with different types; "
                        "re-download the data")
    return first


def from_arrow(table: Any, rows: Callable[[], Sequence[dict[str, Any]]], origin: str,
               data_key: str | None) -> SubsetTable:
    """A subset from an Arrow table in memory (the hub's rows, as ``datasets`` holds them).

    Args:
        table: the rows as an Arrow table (extra columns are ignored).
        rows: the same rows as dicts, validated one by one when the column checks fail
            (for the one-line error).
        origin: the dataset name, for messages.
        data_key: the dataset's content identity (its fingerprint), if known.
    """
    names = set(table.schema.names)
    fast = (table.num_rows > 0 and all(f in names and _type_ok(f, table.schema.field(f).type) for f in FIELDS)
            and not any(_nulls(f, table.column(f)) for f in FIELDS))
    if not fast:
        table = _table_of(validate_rows(rows(), origin))
    part = _in_memory(table.select(list(SMALL_FIELDS)), table.column("profile"))
    return SubsetTable(origin, part.small, part.whole, part.pieces, lambda: data_key)


def _files_key(paths: Sequence[Path]) -> str:
    """A hash of the files' names and bytes: the data's identity for derived caches."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode("utf-8") + b"\0")
        with path.open("rb") as handle:
            while block := handle.read(1 << 22):
                digest.update(block)
        digest.update(b"\0")
    return "files:" + digest.hexdigest()
