"""What SQLite and PostgreSQL spell differently, as objects the one SQL store (sql_store.py) asks.

The store's statements are written once with ``?`` placeholders; where the two databases differ in the
text of a statement (an ``IN`` list or an array, JSON paths, case folding, row order, the full form of a
metadata filter) the store takes the fragment from its dialect.  Pure strings and values: no driver is
imported here, so the PostgreSQL dialect costs nothing to a SQLite process.  What differs beyond text
(connections and transactions, the full-text index, vectors, bulk loads, error mapping) stays in the store
subclasses (sqlite.py, postgres.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["Dialect", "SQLiteDialect", "PostgresDialect", "NUL_STAND_IN", "pg_json"]

CHUNK = 500  # ids per IN (...) lookup, well under SQLite's variable limit

# PostgreSQL text and jsonb cannot hold the character U+0000 (SQLite can): JSON written for jsonb has its
# ``\u0000`` escapes replaced by ``\ufffd`` (the store's connections replace NUL in every string parameter)
NUL_STAND_IN = "\ufffd"
_JSON_NUL = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")  # a \u0000 escape, not an escaped backslash + "u0000"
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def pg_json(obj: Any) -> str:
    """``json.dumps`` for a value PostgreSQL reads as ``jsonb`` (node metadata, edge meta): a NUL in a
    string is written as U+FFFD (jsonb refuses ``\\u0000``)."""
    text = json.dumps(obj, ensure_ascii=False)
    return _JSON_NUL.sub(r"\1\\ufffd", text) if "\\u0000" in text else text


class Dialect:
    """The fragments the one SQL store asks for.  Keys given to the JSON helpers are checked identifiers
    (``base.check_meta_key`` or ``str.isidentifier``), so they are written into the statement as constants."""

    name = ""
    insertion_order = "rowid"  # the column that orders traces and receipts by insertion

    def where_in(self, col: str, values: Iterable[Any]) -> Iterator[tuple[str, list]]:
        """``(condition, params)`` parts that together select ``col`` in ``values`` (none for no values)."""
        raise NotImplementedError

    def order(self, clause: str) -> str:
        """``clause`` (an ``ORDER BY``) where the database needs it for a stable answer, else ''."""
        return clause

    def indexed_by(self, index: str) -> str:
        """A hint naming the index a read must use, where the database takes one."""
        return ""

    def json_text(self, col: str, key: str, text_column: bool = False) -> str:
        """The scalar at ``col.key`` as SQL text (NULL where absent)."""
        raise NotImplementedError

    def json_number(self, col: str, key: str) -> tuple[str, str]:
        """``(value, test)``: the number at ``col.key`` and the condition that it is a JSON number."""
        raise NotImplementedError

    def json_true(self, col: str, key: str) -> str:
        """The condition that ``col.key`` is JSON ``true`` (a text column)."""
        raise NotImplementedError

    def json_value(self, col: str, key: str) -> str:
        """The value at ``col.key`` of a text column (decoded as the driver gives it)."""
        raise NotImplementedError

    def json_has(self, col: str, key: str) -> str:
        """The condition that the object ``col`` has ``key``."""
        raise NotImplementedError

    def contains(self, col: str) -> str:
        """The condition that ``col`` contains the text of one ``?`` parameter."""
        raise NotImplementedError

    def nocase_eq(self, col: str) -> str:
        """``col`` equals one ``?`` parameter, ASCII case ignored (as SQLite's ``NOCASE``)."""
        raise NotImplementedError

    def json_array_length(self, col: str) -> str:
        raise NotImplementedError

    def json_as_text(self, col: str) -> str:
        """A JSON column read back as its text (as SQLite stores it)."""
        return col

    def merge_json(self, old: str, new: str) -> str:
        """The edge ``meta`` an upsert keeps: ``old`` with ``new``'s keys."""
        raise NotImplementedError

    def dumps(self, obj: Any) -> str:
        """JSON text of ``obj`` as this database stores it."""
        return json.dumps(obj, ensure_ascii=False)

    @staticmethod
    def loads(value: Any) -> Any:
        """A JSON column as read: text is decoded, a driver-decoded value is kept."""
        return json.loads(value) if isinstance(value, (str, bytes)) else value

    def meta_value(self, value: Any) -> Any:
        """A ``json_value`` as ``node_meta_values`` reports it (None: left out)."""
        return value

    def metadata_filter(self, where: Iterable[tuple[str, object]]) -> tuple[list[str], list[Any]]:
        """Conditions (OR-ed) and parameters selecting the nodes a metadata-equality filter excludes."""
        raise NotImplementedError

    metadata_keys_sql = ""  # the ``limit`` most frequent scalar/list metadata keys (one ``?``: the limit)
    metadata_valid = ""  # the condition that a node's metadata is a JSON object
    metadata_rows = "nodes"  # the rows ``metadata_filter`` reads


def check_filter_key(key: object) -> str:
    if not isinstance(key, str) or not key or any(ch in key for ch in '"\\') or not key.isprintable():
        raise ValueError(f"bad metadata key {key!r}")
    return key


class SQLiteDialect(Dialect):
    """SQLite: ``IN`` lists in chunks, JSON1 paths, ``NOCASE``, ``INDEXED BY``, FTS5's json_patch merge."""

    name = "sqlite"
    insertion_order = "rowid"
    _WHERE_TYPES: dict[type, tuple[str, ...]] = {
        str: ("'text'",),
        int: ("'integer'", "'real'"),
        float: ("'integer'", "'real'"),
    }

    def where_in(self, col: str, values: Iterable[Any]) -> Iterator[tuple[str, list]]:
        vals = list(values)
        for i in range(0, len(vals), CHUNK):
            part = vals[i : i + CHUNK]
            yield f"{col} IN ({','.join('?' * len(part))})", part

    def order(self, clause: str) -> str:
        return ""  # SQLite's reads keep their index order (and their cost)

    def indexed_by(self, index: str) -> str:
        return f" INDEXED BY {index}"

    def json_text(self, col: str, key: str, text_column: bool = False) -> str:
        return f"json_extract({col}, '$.{key}')"

    def json_number(self, col: str, key: str) -> tuple[str, str]:
        return f"json_extract({col}, '$.{key}')", f"json_type({col}, '$.{key}') IN ('integer', 'real')"

    def json_true(self, col: str, key: str) -> str:
        return f"json_type({col}, '$.{key}') = 'true'"

    def json_value(self, col: str, key: str) -> str:
        return f"json_extract({col}, '$.{key}')"

    def json_has(self, col: str, key: str) -> str:
        return f"json_type({col}, '$.{key}') IS NOT NULL"

    def contains(self, col: str) -> str:
        return f"instr({col}, ?) > 0"

    def nocase_eq(self, col: str) -> str:
        return f"{col} = ? COLLATE NOCASE"

    def json_array_length(self, col: str) -> str:
        return f"json_array_length({col})"

    def merge_json(self, old: str, new: str) -> str:
        return f"json_patch({old}, {new})"

    def metadata_filter(self, where: Iterable[tuple[str, object]]) -> tuple[list[str], list[Any]]:
        """A list value passes when one of its elements equals; a string never equals a number, nor a
        number a boolean; a node that lacks the key (or holds JSON null there) is not judged by it."""
        conds: list[str] = []
        params: list[Any] = []
        for key, value in where:
            path = f'$."{check_filter_key(key)}"'
            kinds: tuple[str, ...]
            if isinstance(value, bool):  # type names are constants, never user input
                kinds, test = ("'true'",) if value else ("'false'",), ""
            elif type(value) in self._WHERE_TYPES:
                kinds, test = self._WHERE_TYPES[type(value)], " AND {v} = ?"
            else:
                raise ValueError(f"metadata filter values are strings, numbers or booleans, got {value!r}")
            k = ", ".join(kinds)
            arr = (
                f"EXISTS (SELECT 1 FROM json_each(nodes.metadata, ?) j WHERE j.type IN ({k}){test.format(v='j.value')})"
            )
            one = f"json_type(metadata, ?) IN ({k})" + test.format(v="json_extract(metadata, ?)")
            conds.append(
                "(coalesce(json_type(metadata, ?), 'null') != 'null' AND NOT (CASE json_type(metadata, ?)"
                f" WHEN 'array' THEN {arr} ELSE {one} END))"
            )
            params += [path, path, path] + ([value] if test else []) + [path] + ([path, value] if test else [])
        return conds, params

    metadata_valid = "json_valid(metadata)"
    metadata_keys_sql = (
        "SELECT key FROM (SELECT j.key AS key, count(*) AS n FROM nodes, json_each(nodes.metadata) AS j"
        " WHERE json_valid(nodes.metadata) AND j.type IN ('text','integer','real','true','false','array')"
        " GROUP BY j.key ORDER BY n DESC LIMIT ?)"
    )


class PostgresDialect(Dialect):
    """PostgreSQL: one array per list (``= ANY(?)``), jsonb operators (node metadata is text, kept byte for
    byte, and parsed where read), ``translate`` for ASCII case, ``ORDER BY`` where a stable answer needs it."""

    name = "postgres"
    insertion_order = "pos"

    def where_in(self, col: str, values: Iterable[Any]) -> Iterator[tuple[str, list]]:
        vals = list(values)
        if vals:
            yield f"{col} = ANY(?)", [vals]

    def json_text(self, col: str, key: str, text_column: bool = False) -> str:
        return f"{col}::jsonb ->> '{key}'" if text_column else f"{col} ->> '{key}'"

    def json_number(self, col: str, key: str) -> tuple[str, str]:
        return f"({col}->>'{key}')::double precision", f"jsonb_typeof({col}->'{key}') = 'number'"

    def json_true(self, col: str, key: str) -> str:
        return f"jsonb_typeof({col}::jsonb -> '{key}') = 'boolean' AND ({col}::jsonb ->> '{key}')::boolean"

    def json_value(self, col: str, key: str) -> str:
        return f"{col}::jsonb -> '{key}'"

    def json_has(self, col: str, key: str) -> str:
        return f"jsonb_exists({col}, '{key}')"

    def contains(self, col: str) -> str:
        return f"strpos({col}, ?) > 0"

    def nocase_eq(self, col: str) -> str:
        # SQLite's COLLATE NOCASE folds ASCII letters only; so does this
        return f"translate({col}, '{_UPPER}', '{_UPPER.lower()}') = translate(?, '{_UPPER}', '{_UPPER.lower()}')"

    def json_array_length(self, col: str) -> str:
        return f"json_array_length({col}::json)"

    def json_as_text(self, col: str) -> str:
        return f"{col}::text"

    def merge_json(self, old: str, new: str) -> str:
        return f"{old} || {new}"

    def dumps(self, obj: Any) -> str:
        return pg_json(obj)

    def meta_value(self, value: Any) -> Any:
        return None if isinstance(value, (dict, list)) else value  # jsonb: numbers stay numbers

    def metadata_filter(self, where: Iterable[tuple[str, object]]) -> tuple[list[str], list[Any]]:
        """The SQLite dialect's rules, over ``m`` (the metadata parsed as jsonb)."""
        conds: list[str] = []
        params: list[Any] = []
        for key, value in where:
            key = check_filter_key(key)
            arg: Any
            if isinstance(value, bool):
                test, arg = "(jsonb_typeof({x}) = 'boolean' AND ({x})::boolean = ?)", value
            elif isinstance(value, str):
                test, arg = "(jsonb_typeof({x}) = 'string' AND ({x}) #>> '{{}}' = ?)", value
            elif isinstance(value, (int, float)):
                test, arg = "(jsonb_typeof({x}) = 'number' AND ({x})::float8 = ?::float8)", float(value)
            else:
                raise ValueError(f"metadata filters values are strings, numbers or booleans, got {value!r}")
            conds.append(
                "(m -> ? IS NOT NULL AND jsonb_typeof(m -> ?) <> 'null' AND NOT (CASE WHEN jsonb_typeof(m -> ?)"
                " = 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements(m -> ?) AS j(v) WHERE "
                + test.format(x="j.v")
                + ") ELSE "
                + test.format(x="m -> ?")
                + " END))"
            )
            params += [key, key, key, key, arg, key, key, arg]
        return conds, params

    metadata_valid = "jsonb_typeof(m) = 'object'"
    metadata_rows = "(SELECT idx, metadata::jsonb AS m FROM nodes) AS n"
    metadata_keys_sql = (
        "SELECT j.key FROM (SELECT metadata::jsonb AS m FROM nodes) AS n,"
        " jsonb_each(CASE WHEN jsonb_typeof(n.m) = 'object' THEN n.m ELSE '{}'::jsonb END) AS j"
        " WHERE jsonb_typeof(j.value) IN ('string', 'number', 'boolean', 'array')"
        " GROUP BY j.key ORDER BY count(*) DESC, j.key LIMIT ?"
    )
