"""MkDocs hook: the key tables of the scene reference, generated from docs/scene.schema.json.

docs/scene.schema.json is what `intact schema` prints (a test keeps the two equal), and the scene reader
reads exactly its keys. In a page, the line `<!-- scene-keys -->` becomes the table of the top-level keys and
`<!-- scene-keys: PATH -->` the table of the keys under PATH, less those under a deeper table of the same
page. A page with such tables must show every key of the schema in one of them, and every table's PATH must
be a key; otherwise the build fails.
"""
import json
import os
import re

DIRECTIVE = re.compile(r"^<!-- scene-keys(?:: (\S+))? -->$", re.MULTILINE)
SCHEMA = os.path.join(os.path.dirname(__file__), "..", "scene.schema.json")


def walk(node, path, out):
    """(path, schema, required) of every key below `node`, parents first, in the schema's order."""
    required = set(node.get("required", []))
    for name, child in node.get("properties", {}).items():
        key = f"{path}.{name}" if path else name
        out.append((key, child, name in required))
        if child.get("type") == "object":
            walk(child, key, out)
        elif child.get("type") == "array" and "properties" in child.get("items", {}):
            walk(child["items"], key + "[]", out)
    return out


def number(x):
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return re.sub(r"e([-+])0*(\d)", lambda m: "e" + ("-" if m.group(1) == "-" else "") + m.group(2), repr(x))


def value(x):
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, (int, float)):
        return number(x)
    if isinstance(x, str):
        return f"`{x}`"
    if isinstance(x, list):
        return "[" + ", ".join(value(v) if not isinstance(v, str) else v for v in x) + "]"
    return json.dumps(x)


def bounds(node):
    lo = [(node[k], k) for k in ("minimum", "exclusiveMinimum") if k in node]
    hi = [(node[k], k) for k in ("maximum", "exclusiveMaximum") if k in node]
    if lo and hi:
        left = "(" if lo[0][1] == "exclusiveMinimum" else "["
        right = ")" if hi[0][1] == "exclusiveMaximum" else "]"
        return f"in {left}{number(lo[0][0])}, {number(hi[0][0])}{right}"
    if lo:
        return (">" if lo[0][1] == "exclusiveMinimum" else "≥") + " " + number(lo[0][0])
    if hi:
        return ("<" if hi[0][1] == "exclusiveMaximum" else "≤") + " " + number(hi[0][0])
    return ""


def type_text(node):
    if "oneOf" in node:
        limit = bounds(node["oneOf"][0])
        return "number or [x, y, z]" + (f", each {limit}" if limit else "")
    kind = node.get("type")
    if kind == "string" and "enum" in node:
        names = [f"`{v}`" for v in node["enum"]]
        return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    if kind == "array" and node.get("minItems") == 3 and node.get("maxItems") == 3:
        item = node["items"]
        limit = bounds(item)
        shape = "[nx, ny, nz]" if item.get("type") == "integer" else "[x, y, z]"
        return shape + (f", each {limit}" if limit else "")
    if kind == "array":
        return "array of objects"
    limit = bounds(node)
    name = {"boolean": "bool"}.get(kind, kind)
    return f"{name} {limit}" if limit else name


def default_text(node, required):
    if required:
        return "required"
    if "default" in node:
        return value(node["default"])
    if node.get("type") == "object" and "x-intact-default" not in node:
        return "{} (its defaults)"
    return node.get("x-intact-default", "none")


def meaning(node):
    text = node.get("description", "")
    note = node.get("x-intact-default")
    if note and text.endswith(f". Default: {note}."):
        text = text[: -len(f" Default: {note}.")]
    return text


def cell(text):
    return text.replace("|", "\\|")


def table(rows):
    lines = ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
    for key, node, required in rows:
        lines.append(
            f"| `{key}` | {cell(type_text(node))} | {cell(default_text(node, required))} | {cell(meaning(node))} |"
        )
    return "\n".join(lines)


def under(key, path):
    """Whether `key` lies strictly below `path` ("" is the root)."""
    return not path or key.startswith(path + ".") or key.startswith(path + "[].")


def on_page_markdown(markdown, page, **kwargs):
    tables = [m.group(1) or "" for m in DIRECTIVE.finditer(markdown)]
    if not tables:
        return markdown
    with open(SCHEMA, encoding="utf-8") as f:
        keys = walk(json.load(f), "", [])
    names = {key for key, _, _ in keys}
    for path in tables:
        if path and path not in names:
            raise ValueError(f"{page.file.src_path}: <!-- scene-keys: {path} --> names no key of {SCHEMA}")

    def owner(key):
        # The deepest table whose path the key lies below.
        return max((p for p in tables if under(key, p)), key=len, default=None)

    missing = [key for key in names if owner(key) is None]
    if missing:
        raise ValueError(f"{page.file.src_path}: no table shows the scene keys {sorted(missing)}")

    def replace(match):
        path = match.group(1) or ""
        return table([row for row in keys if owner(row[0]) == path])

    return DIRECTIVE.sub(replace, markdown)
