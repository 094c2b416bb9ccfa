"""Parses SQL texts sent to Athena with a Trino/Athena-dialect parser (sqlglot, read="athena").

Input on stdin: a JSON array of {"name": ..., "sql": ...}. Output on stdout: a JSON array of
{"name": ..., "error": ...} for every text that does not parse; exit status 1 when there is one.

UNLOAD is not in sqlglot's Athena grammar (it falls back to an unparsed Command), so an UNLOAD is
checked as Athena documents it (Athena User Guide, "UNLOAD": UNLOAD (SELECT ...) TO 's3://...'
WITH ( property = expression [, ...] )): its query is parsed, the rest matched to that shape.
"""

import json
import re
import sys

import sqlglot
from sqlglot import exp

UNLOAD_TAIL = re.compile(r"^\s*TO\s+'s3://[^']+'\s+WITH\s*\((\s*\w+\s*=\s*('[^']*'|ARRAY\s*\[[^\]]*\]|\w+)\s*,?)+\)\s*$", re.S)


def unload_parts(sql: str):
    """The query in UNLOAD ( ... ) and what follows it, by balanced parentheses outside string literals."""
    m = re.match(r"\s*UNLOAD\s*\(", sql, re.I)
    if not m:
        return None
    depth, i, quoted = 1, m.end(), False
    while i < len(sql) and depth > 0:
        c = sql[i]
        if c == "'":
            quoted = not quoted
        elif not quoted:
            depth += {"(": 1, ")": -1}.get(c, 0)
        i += 1
    if depth != 0:
        raise ValueError("UNLOAD: unbalanced parentheses")
    return sql[m.end() : i - 1], sql[i:]


def check(sql: str) -> None:
    parts = unload_parts(sql)
    if parts is not None:
        query, tail = parts
        check(query)
        if not UNLOAD_TAIL.match(tail):
            raise ValueError(f"UNLOAD: expected TO 's3://...' WITH (property = value, ...) after the query, got {tail.strip()[:80]!r}")
        return
    parsed = sqlglot.parse(sql, read="athena")
    for statement in parsed:
        if isinstance(statement, exp.Command):
            raise ValueError(f"not in the Athena grammar sqlglot knows: {sql.strip()[:80]!r}")


def main() -> int:
    problems = []
    for item in json.load(sys.stdin):
        try:
            check(item["sql"])
        except Exception as e:  # noqa: BLE001 - every parser error is reported with the statement's name
            problems.append({"name": item["name"], "error": str(e).splitlines()[0][:300]})
    json.dump(problems, sys.stdout)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
