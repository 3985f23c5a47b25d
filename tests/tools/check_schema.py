#!/usr/bin/env python3
# Check that a file holds exactly one JSON document and that it conforms to a JSON Schema
# (draft 2020-12) written in the subset softdpu's schemas use (docs/schemas/, docs/tools.md):
# type (a name or a list of names), properties, required, items, enum, additionalProperties
# (false or a schema); $schema, title and description are annotations. Any other keyword in a
# schema is an error, so a schema cannot silently rely on something this checker ignores.
# Standard library only.
#   check_schema.py <schema.json> [<document.json> | -]
# Exit status: 0 valid, 1 invalid (each problem printed with its JSON path), 2 bad usage or an
# unreadable/invalid schema.
# SPDX-License-Identifier: BSD-3-Clause
import json
import sys

ANNOTATIONS = {"$schema", "title", "description"}
KEYWORDS = {"type", "properties", "required", "items", "enum", "additionalProperties"}
TYPES = {"object", "array", "string", "integer", "number", "boolean", "null"}


class SchemaError(Exception):
    pass


def type_of(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    raise SchemaError("not a JSON value: %r" % (value,))


def has_type(value, name):
    t = type_of(value)
    return t == name or (name == "number" and t == "integer")


def same(a, b):
    # JSON equality: true is not 1, 1 equals 1.0
    ta, tb = type_of(a), type_of(b)
    if {ta, tb} <= {"integer", "number"}:
        return a == b
    if ta != tb:
        return False
    if ta == "array":
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if ta == "object":
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def check_schema(schema, path="#"):
    if not isinstance(schema, dict):
        raise SchemaError("%s: a schema must be an object" % path)
    for key in schema:
        if key not in KEYWORDS and key not in ANNOTATIONS:
            raise SchemaError("%s: keyword %r is outside the supported subset" % (path, key))
    t = schema.get("type")
    if t is not None:
        names = t if isinstance(t, list) else [t]
        if not names or any(n not in TYPES for n in names):
            raise SchemaError("%s: bad type %r" % (path, t))
    if "enum" in schema and not isinstance(schema["enum"], list):
        raise SchemaError("%s: enum must be an array" % path)
    if "required" in schema and not (isinstance(schema["required"], list) and
                                     all(isinstance(r, str) for r in schema["required"])):
        raise SchemaError("%s: required must be an array of strings" % path)
    for name, sub in schema.get("properties", {}).items():
        check_schema(sub, "%s/properties/%s" % (path, name))
    if "items" in schema:
        check_schema(schema["items"], path + "/items")
    extra = schema.get("additionalProperties", True)
    if isinstance(extra, dict):
        check_schema(extra, path + "/additionalProperties")
    elif not isinstance(extra, bool):
        raise SchemaError("%s: additionalProperties must be a boolean or a schema" % path)


def validate(value, schema, path, errors):
    t = schema.get("type")
    if t is not None:
        names = t if isinstance(t, list) else [t]
        if not any(has_type(value, n) for n in names):
            errors.append("%s: expected %s, got %s" % (path, " or ".join(names),
                                                      type_of(value)))
            return
    if "enum" in schema and not any(same(value, e) for e in schema["enum"]):
        errors.append("%s: %s is not one of %s" % (path, json.dumps(value),
                                                   json.dumps(schema["enum"])))
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                errors.append("%s: required key %r is missing" % (path, name))
        extra = schema.get("additionalProperties", True)
        for name, sub in value.items():
            where = "%s/%s" % (path, name)
            if name in props:
                validate(sub, props[name], where, errors)
            elif extra is False:
                errors.append("%s: key not allowed here" % where)
            elif isinstance(extra, dict):
                validate(sub, extra, where, errors)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            validate(item, schema["items"], "%s/%d" % (path, i), errors)


def load_one_document(text):
    """The one JSON document text holds; ValueError when it holds none or more than one."""
    dec = json.JSONDecoder()
    start = len(text) - len(text.lstrip())
    if start == len(text):
        raise ValueError("no JSON document (empty input)")
    doc, end = dec.raw_decode(text, start)
    rest = text[end:].strip()
    if rest:
        raise ValueError("more than one JSON document, or trailing text: %r" % rest[:80])
    return doc


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: check_schema.py <schema.json> [<document.json> | -]", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            schema = json.load(f)
        check_schema(schema)
    except (OSError, ValueError, SchemaError) as e:
        print("check_schema: schema %s: %s" % (argv[1], e), file=sys.stderr)
        return 2
    src = argv[2] if len(argv) == 3 else "-"
    try:
        if src == "-":
            text = sys.stdin.read()
        else:
            with open(src, encoding="utf-8") as f:
                text = f.read()
        doc = load_one_document(text)
    except (OSError, ValueError) as e:
        print("check_schema: %s: %s" % (src, e), file=sys.stderr)
        return 1
    errors = []
    validate(doc, schema, "#", errors)
    for e in errors:
        print("check_schema: %s: %s" % (src, e), file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
