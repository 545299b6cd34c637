"""Check docs/scene.schema.json with a JSON Schema validator (Debian's python3-jsonschema): it must be a valid
draft 2020-12 schema, accept every scene in inputs/, and refuse a scene with an unknown key, a wrong type or a
value outside its bounds or its allowed values.

    python3 tests/cli/validate_scenes.py SCHEMA SCENE.json...
"""
import copy
import json
import sys

import jsonschema

schema_path, scenes = sys.argv[1], sys.argv[2:]
with open(schema_path, encoding="utf-8") as f:
    schema = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)

problems = []
for path in scenes:
    with open(path, encoding="utf-8") as f:
        scene = json.load(f)
    for error in validator.iter_errors(scene):
        problems.append(f"{path}: {'.'.join(map(str, error.absolute_path))}: {error.message}")

with open(scenes[0], encoding="utf-8") as f:
    good = json.load(f)
bad_cases = {
    "unknown key": lambda s: s["time"].update({"dtt": 0.01}),
    "wrong type": lambda s: s["time"].update({"dt": "0.01"}),
    "out of bounds": lambda s: s["time"].update({"dt": 0.0}),
    "not an allowed value": lambda s: s.update({"solver": {"type": "newton"}}),
    "vector of two": lambda s: s.update({"gravity": [0.0, -9.81]}),
}
for name, spoil in bad_cases.items():
    scene = copy.deepcopy(good)
    spoil(scene)
    if validator.is_valid(scene):
        problems.append(f"the schema accepts a scene with {name}")

for p in problems:
    print(p)
print(f"{len(scenes)} scenes valid, {len(bad_cases)} spoilt ones refused" if not problems else "schema check failed")
sys.exit(1 if problems else 0)
