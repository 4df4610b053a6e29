#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Validates JSON documents against a JSON Schema.

usage: validate_json.py [--lines] SCHEMA FILE [FILE...]

Each FILE (or - for standard input) holds one JSON document; with --lines,
every non-empty line of it is one document (JSON Lines, e.g. a trace file).
The schema's "$schema" picks the draft (2020-12 when it names none); a
relative "$ref" is read from beside the schema file.

Exit status: 0 when every document is valid; 1 when one is not valid or not
JSON, with one line per failure naming the file (and line), the JSON path of
the offending value and what is wrong; 2 on a usage error (bad arguments, a
schema that cannot be read or is not a valid schema).
"""

import json
import pathlib
import sys

import jsonschema
from jsonschema import validators

USAGE = "usage: validate_json.py [--lines] SCHEMA FILE [FILE...]"


def usage_error(message):
    print(f"validate_json.py: {message}", file=sys.stderr)
    print(USAGE, file=sys.stderr)
    sys.exit(2)


def load_validator(schema_path):
    try:
        schema = json.loads(pathlib.Path(schema_path).read_text(encoding="utf-8"))
    except OSError as e:
        usage_error(f"cannot read schema {schema_path}: {e.strerror}")
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        usage_error(f"schema {schema_path} is not JSON: {e}")
    cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as e:
        usage_error(f"schema {schema_path} is not a valid schema: at {e.json_path}: {e.message}")
    # A relative "$ref" names a file beside the schema.
    schema.setdefault("$id", pathlib.Path(schema_path).resolve().as_uri())
    return cls(schema, **file_refs())


def file_refs():
    """What lets the validator read a "$ref" to a file: jsonschema before 4.18
    reads file: URIs itself; later ones ask a referencing.Registry."""
    try:
        import referencing
        import referencing.exceptions
        import referencing.jsonschema
    except ImportError:
        return {}

    def retrieve(uri):
        if not uri.startswith("file://"):
            raise referencing.exceptions.NoSuchResource(ref=uri)
        contents = json.loads(pathlib.Path(uri[len("file://"):]).read_text(encoding="utf-8"))
        return referencing.Resource.from_contents(
            contents, default_specification=referencing.jsonschema.DRAFT202012)

    return {"registry": referencing.Registry(retrieve=retrieve)}


def parse(text):
    """json.loads, strict: NaN and Infinity are not JSON, and a key given
    twice in one object is an error (Python would keep the last)."""
    def reject(name):
        raise json.JSONDecodeError(f"{name} is not JSON", text, 0)

    def no_duplicates(pairs):
        obj = {}
        for key, value in pairs:
            if key in obj:
                raise json.JSONDecodeError(f"the key {key!r} is given twice", text, 0)
            obj[key] = value
        return obj
    return json.loads(text, parse_constant=reject, object_pairs_hook=no_duplicates)


def read_text(path):
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    return pathlib.Path(path).read_text(encoding="utf-8"), path


def documents(text, name, lines):
    """Yields (label, parsed document or None, parse error or None)."""
    if not lines:
        try:
            yield name, parse(text), None
        except json.JSONDecodeError as e:
            yield name, None, e
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        label = f"{name}:{number}"
        try:
            yield label, parse(line), None
        except json.JSONDecodeError as e:
            yield label, None, e


def shortened(message, most=300):
    """A message that quotes a whole object, cut to its first `most` characters."""
    return message if len(message) <= most else message[:most] + "..."


def main(argv):
    lines = False
    args = list(argv)
    if args and args[0] == "--lines":
        lines = True
        args.pop(0)
    if any(a.startswith("--") for a in args):
        usage_error(f"unknown option {next(a for a in args if a.startswith('--'))}")
    if len(args) < 2:
        usage_error("a schema and at least one file are needed")
    validator = load_validator(args[0])

    failures = 0
    checked = 0
    for path in args[1:]:
        try:
            text, name = read_text(path)
        except OSError as e:
            print(f"{path}: cannot read: {e.strerror}")
            failures += 1
            continue
        except UnicodeDecodeError as e:
            print(f"{path}: not UTF-8 text: {e}")
            failures += 1
            continue
        seen = 0
        for label, document, error in documents(text, name, lines):
            seen += 1
            checked += 1
            if error is not None:
                print(f"{label}: not JSON: {error}")
                failures += 1
                continue
            try:
                errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
            except Exception as e:  # pylint: disable=broad-except
                # Validation itself raises only when a "$ref" leads nowhere.
                usage_error(f"schema {args[0]}: cannot follow a $ref: {e}")
            for e in errors:
                print(f"{label}: at {e.json_path}: {shortened(e.message)}")
            if errors:
                failures += 1
        if seen == 0:
            print(f"{name}: no JSON document in it")
            failures += 1
    if failures:
        print(f"validate_json.py: {failures} of {checked} documents invalid against {args[0]}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
