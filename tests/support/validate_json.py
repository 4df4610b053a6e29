#!/usr/bin/python3
"""Validates JSON documents against a JSON Schema (Debian's python3-jsonschema).

Usage: validate_json.py [--lines] SCHEMA FILE...

Each FILE is one JSON document, or with --lines one document per line (a
trace file); an empty line is an error. Relative "$ref"s in SCHEMA are
files beside it. Strict JSON: NaN, Infinity and a key given twice are
errors.

Exit 0 when every document is valid; 1 naming the file (and line), the
JSON path and what failed for each one that is not; 2 on bad usage, an
unreadable or invalid schema, or no jsonschema module.
"""

import json
import pathlib
import sys

try:
    import jsonschema
except ImportError:
    print("validate_json: the jsonschema module is missing (apt-get install python3-jsonschema)", file=sys.stderr)
    sys.exit(2)

MAX_ERRORS = 10  # per document


class NotJson(ValueError):
    pass


def reject_constant(name):
    raise NotJson(f"{name} is not JSON")


def no_duplicates(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise NotJson(f"the key {key!r} is given twice")
        obj[key] = value
    return obj


def parse(text):
    return json.loads(text, parse_constant=reject_constant, object_pairs_hook=no_duplicates)


def json_path(parts):
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def make_validator(schema_path):
    try:
        schema = parse(schema_path.read_text())
    except (OSError, ValueError) as e:
        print(f"validate_json: schema {schema_path}: {e}", file=sys.stderr)
        sys.exit(2)
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as e:
        print(f"validate_json: schema {schema_path} is not a valid schema: {e.message}", file=sys.stderr)
        sys.exit(2)
    # The schemas beside it, for relative "$ref"s.
    store = {}
    for other in schema_path.resolve().parent.glob("*.json"):
        try:
            store[other.as_uri()] = parse(other.read_text())
        except (OSError, ValueError):
            pass  # not a schema of ours: a "$ref" to it fails with its own message
    resolver = jsonschema.RefResolver(base_uri=schema_path.resolve().as_uri(), referrer=schema, store=store)
    return cls(schema, resolver=resolver)


def check(validator, where, text):
    """Prints what is wrong with the document `text`; returns True when valid."""
    try:
        document = parse(text)
    except ValueError as e:
        print(f"{where}: not JSON: {e}")
        return False
    errors = sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
    for e in errors[:MAX_ERRORS]:
        schema_at = "#/" + "/".join(map(str, e.absolute_schema_path))
        print(f"{where}: at {json_path(e.absolute_path)}: {e.message} (schema {schema_at})")
    if len(errors) > MAX_ERRORS:
        print(f"{where}: and {len(errors) - MAX_ERRORS} more errors")
    return not errors


def main(argv):
    lines = False
    if argv and argv[0] == "--lines":
        lines = True
        argv = argv[1:]
    if len(argv) < 2 or any(a.startswith("-") for a in argv):
        print("usage: validate_json.py [--lines] SCHEMA FILE...", file=sys.stderr)
        return 2
    schema_path = pathlib.Path(argv[0])
    validator = make_validator(schema_path)
    ok = True
    documents = 0
    for name in argv[1:]:
        try:
            text = pathlib.Path(name).read_text()
        except (OSError, UnicodeDecodeError) as e:
            print(f"{name}: cannot read: {e}")
            ok = False
            continue
        if lines:
            rows = text.split("\n")
            if rows[-1] == "":
                rows.pop()  # the newline that ends the last line
            for number, line in enumerate(rows, 1):
                ok = check(validator, f"{name}:{number}", line) and ok
                documents += 1
        else:
            ok = check(validator, name, text) and ok
            documents += 1
    noun = "document" if documents == 1 else "documents"
    print(f"{documents} {noun} {'valid' if ok else 'checked, not all valid'} against {schema_path.name}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
