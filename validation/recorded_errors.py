"""Recorded signed errors of the memory matrix's rows, and the rule a row is
checked by (tests/fixtures/memory/matrix-recorded.json, docs/validation.md
"Memory: the target matrix").

A row passes when each of its errors is within the target, or, outside it,
when the same error was recorded outside it and has not grown by more than
REGRESSION (0.5 percentage points) since. A row that was within the target
and crosses out of it fails, as does a row outside it with no recorded error
and a row that has no numbers at all (the measurement, the export or the
prediction raised): nothing here turns a failure into a pass. The recorded
file is written from a real run (memory_matrix.py --record); a miss keeps
the text that says why it misses ("why"), carried over from record to record.
"""

import json
import os

REGRESSION = 0.005   # 0.5 percentage points
UNEXPLAINED = "not yet explained"


def row_key(row):
    """model|bBATCH|mode|frontend (the parity rows' frontend: 'onnx dynamo vs fx')."""
    return "%s|b%d|%s|%s" % (row["model"], row["batch"], row["mode"], row["frontend"])


def load(path, truth_name):
    """This truth file's section of the recorded file: {row key: entry}."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f).get(truth_name, {}).get("rows", {})


def verdict(errors, recorded, target):
    """(ok, why) of a row with `errors` {metric: signed error} against its
    recorded entry (None when it has none)."""
    problems = []
    for metric, err in sorted(errors.items()):
        if abs(err) <= target:
            continue
        was = (recorded or {}).get(metric)
        if was is None:
            problems.append("%s %+.2f%% outside %g%%, no recorded error" % (metric, 100 * err, 100 * target))
        elif abs(was) <= target:
            problems.append("%s %+.2f%% crossed out of %g%% (recorded %+.2f%%)" % (metric, 100 * err, 100 * target,
                                                                                100 * was))
        elif abs(err) - abs(was) > REGRESSION:
            problems.append("%s %+.2f%% regressed %.2f pp from its recorded %+.2f%%" % (
                metric, 100 * err, 100 * (abs(err) - abs(was)), 100 * was))
    return not problems, "; ".join(problems)


def write(path, truth_name, torch_version, command, rows):
    """Records `rows` [(key, errors, target)] in this truth file's section,
    each keeping the "why" of its previous entry (or of a row of the same
    model, mode and frontend at another batch); rows this run did not produce
    (another batch, model or frontend, or a row that failed) keep their entry.
    Returns the keys of misses without a cause."""
    doc = {}
    if os.path.exists(path):
        with open(path) as f:
            doc = json.load(f)
    old = doc.get(truth_name, {}).get("rows", {})
    why_any_batch = {}
    for k, v in old.items():
        if v.get("why"):
            model, _, mode, frontend = k.split("|", 3)
            why_any_batch.setdefault((model, mode, frontend), v["why"])
    section, unexplained = dict(old), []
    for key, errors, target in rows:
        entry = {m: round(e, 5) for m, e in errors.items()}
        model, _, mode, frontend = key.split("|", 3)
        why = (old.get(key) or {}).get("why") or why_any_batch.get((model, mode, frontend))
        if any(abs(e) > target for e in errors.values()):
            entry["why"] = why or UNEXPLAINED
            if not why:
                unexplained.append(key)
        section[key] = entry
    doc[truth_name] = {"torch": torch_version, "command": command, "rows": section}
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)
    return unexplained
