"""services: how well the checkpoint concept matching reads meaning, and what it costs.

Usage: python -m benchmarks.concept_matching [--show-errors]

Reads the labelled corpus the tests carry (tests/families/services/data/concept_corpus.jsonl: a calibration half, the
rows the rules were written and tuned on, and a held-out half written blind after the last rule change, split by
template) and prints precision, recall and F1 of the shipped matcher at its shipped threshold per half and per kind
(``--half``: one half only), then the time per decision.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from undertow.scoring.services import THRESHOLD, EmbeddingMatcher

DATA = Path(__file__).resolve().parent.parent / "tests" / "families" / "services" / "data"


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def confusion(decided: list[tuple[bool, bool]]) -> tuple[float, float, float, int, int]:
    tp = sum(p and y for p, y in decided)
    fp = sum(p and not y for p, y in decided)
    fn = sum(y and not p for p, y in decided)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1, fp, fn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show-errors", action="store_true", help="print every row the matcher gets wrong")
    parser.add_argument("--half", choices=["calibration", "held_out"], help="measure one half only")
    args = parser.parse_args()
    rows = [r for r in rows_of(DATA / "concept_corpus.jsonl") if args.half in (None, r["half"])]
    matcher = EmbeddingMatcher()
    matcher.matches("warm-up", "the model loads here")
    parts: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    kinds: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    started = time.perf_counter()
    for row in rows:
        said = matcher.matches(row["concept"], row["text"], row["synonyms"])
        parts[row["half"]].append((said, row["label"]))
        kinds[row["kind"]].append((said, row["label"]))
        if args.show_errors and said != row["label"]:
            print(f"{row['half']:<11} {row['kind']:<12} label {row['label']!s:<5} {row['concept']!r}: {row['text']}")
    elapsed = time.perf_counter() - started
    print(f"threshold {THRESHOLD}; {platform.machine()}, {os.cpu_count()} CPUs")
    print(f"{'part':<12} {'n':>5} {'precision':>9} {'recall':>7} {'F1':>6} {'FP':>4} {'FN':>4}")
    for part in ("calibration", "held_out"):
        if part in parts:
            p, r, f, fp, fn = confusion(parts[part])
            print(f"{part:<12} {len(parts[part]):>5} {p:>9.3f} {r:>7.3f} {f:>6.3f} {fp:>4} {fn:>4}")
    print()
    for kind, decided in sorted(kinds.items()):
        p, r, f, fp, fn = confusion(decided)
        print(f"{kind:<12} {len(decided):>5} {p:>9.3f} {r:>7.3f} {f:>6.3f} {fp:>4} {fn:>4}")
    print(f"\n{len(rows)} decisions in {elapsed:.1f} s: {1000 * elapsed / len(rows):.1f} ms each (model loaded)")


if __name__ == "__main__":
    main()
