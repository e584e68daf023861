"""Independent Python implementations of what the materializations document:
the hash encodings and the rules of each history kind. Tests compare dbt's
tables with these."""
from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

import xxhash


def spark_text(value: Any) -> Optional[str]:
    """The text Spark's cast(value as string) gives for the types the tests use."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        text = value.strftime("%Y-%m-%d %H:%M:%S.%f").rstrip("0").rstrip(".")
        return text
    return str(value)


def row_hash(attributes: Mapping[str, Any]) -> int:
    """xxHash64 (seed 42, as a signed 64-bit integer) over <len(name)>:<name><len(value)>:<value>
    of non-NULL columns, sorted by name."""
    tokens = []
    for name in sorted(attributes):
        text = spark_text(attributes[name])
        if text is not None:
            tokens.append(f"{len(name)}:{name}{len(text)}:{text}")
    unsigned = xxhash.xxh64_intdigest("".join(tokens).encode(), seed=42)
    return unsigned - (1 << 64) if unsigned >= 1 << 63 else unsigned


def hash_key(values: Sequence[Any]) -> bytes:
    """The first 16 bytes of sha256 over <len(value)>:<value> of each value, in order."""
    parts = []
    for value in values:
        text = spark_text(value)
        parts.append(f"{len(text)}:{text}")
    return hashlib.sha256("".join(parts).encode()).digest()[:16]


@dataclass
class Scd2Version:
    key: tuple
    attributes: dict
    started_at: dt.datetime
    ended_at: Optional[dt.datetime] = None
    state: str = "new"
    load_run_id: str = ""


@dataclass
class Scd2Model:
    """The rules of scd2_hist, applied snapshot by snapshot."""

    versions: list = field(default_factory=list)

    def load(self, snapshot: Mapping[tuple, dict], at: dt.datetime, run_id: str) -> None:
        for version in self.versions:
            if version.ended_at is not None:
                continue
            if version.key not in snapshot:
                version.ended_at, version.state, version.load_run_id = at, "deleted", run_id
            elif row_hash(snapshot[version.key]) != row_hash(version.attributes):
                version.ended_at, version.state, version.load_run_id = at, "changed", run_id
        still_open = {v.key for v in self.versions if v.ended_at is None}
        closed_as_changed = {v.key for v in self.versions if v.ended_at == at and v.state == "changed"}
        for key, attributes in snapshot.items():
            if key in still_open:
                continue
            state = "changed" if key in closed_as_changed else "new"
            self.versions.append(Scd2Version(key, dict(attributes), at, None, state, run_id))


def versions_from_events(events: Iterable[tuple]) -> list[Scd2Version]:
    """scd2_hist's rules for input='changes', walked per key in sequence order.
    events: (key tuple, at, tie, deleted, attributes dict); the same event twice is
    one event. At one instant the last event (by tie) decides the key's state from
    there: an upsert's attributes, or none after a delete. A state other than the
    open version's closes it there (changed, or deleted when the state is none) and,
    unless none, opens a version (new when none was open, else changed)."""
    unique = {(event[0], event[1], event[2]): event for event in events}
    by_key: dict[tuple, list] = {}
    for event in unique.values():
        by_key.setdefault(event[0], []).append(event)
    versions = []
    for key, key_events in by_key.items():
        last_at_instant: dict[dt.datetime, tuple] = {}
        for event in sorted(key_events, key=lambda e: (e[1], e[2])):
            last_at_instant[event[1]] = event
        current = None
        for at in sorted(last_at_instant):
            _, _, _, deleted, attributes = last_at_instant[at]
            state = None if deleted else row_hash(attributes)
            if state == (row_hash(current.attributes) if current else None):
                continue
            if current is not None:
                current.ended_at, current.state = at, "deleted" if state is None else "changed"
            opened = None if state is None else Scd2Version(key, dict(attributes), at, None,
                                                            "changed" if current else "new")
            if opened:
                versions.append(opened)
            current = opened
    return versions


@dataclass(frozen=True)
class BeliefRow:
    """A row of a bitemporal table: a version (key, attributes as sorted items, interval,
    state) as believed from `recorded_at` until `superseded_at` (None: still believed)."""
    key: tuple
    attributes: tuple
    started_at: dt.datetime
    ended_at: Optional[dt.datetime]
    state: str
    recorded_at: dt.datetime
    superseded_at: Optional[dt.datetime] = None


def beliefs_from_loads(loads: Sequence[Iterable[tuple]], recorded: Sequence[dt.datetime]) -> list[BeliefRow]:
    """A bitemporal table's rules for events, load by load: load j's events (as
    versions_from_events takes them) are recorded at recorded[j], each replacing an event of
    the same key and sequence recorded before (a correction); the belief after it is
    versions_from_events of every event recorded so far."""
    events: dict[tuple, tuple] = {}

    def belief_after(load: Iterable[tuple]) -> list[Scd2Version]:
        for event in load:
            events[(event[0], event[1], event[2])] = event
        return versions_from_events(events.values())

    return belief_rows([belief_after(load) for load in loads], recorded)


def beliefs_from_snapshots(loads: Sequence[tuple[dt.datetime, Mapping[tuple, dict]]],
                           recorded: Sequence[dt.datetime]) -> list[BeliefRow]:
    """A bitemporal table's rules for snapshots, load by load: load j, (load_timestamp,
    snapshot), is recorded at recorded[j] and replaces a snapshot of the same load_timestamp
    recorded before (a restatement); the belief after it is Scd2Model's history of the
    snapshots recorded so far, loaded in load_timestamp order."""
    snapshots: dict[dt.datetime, Mapping[tuple, dict]] = {}

    def belief_after(load: tuple[dt.datetime, Mapping[tuple, dict]]) -> list[Scd2Version]:
        snapshots[load[0]] = load[1]
        model = Scd2Model()
        for at in sorted(snapshots):
            model.load(snapshots[at], at, "")
        return model.versions

    return belief_rows([belief_after(load) for load in loads], recorded)


def belief_rows(beliefs: Sequence[Iterable[Scd2Version]], recorded: Sequence[dt.datetime]) -> list[BeliefRow]:
    """The rows of a bitemporal table whose belief after load j is beliefs[j], recorded at
    recorded[j]: a version (key, attributes, interval, state) believed after loads j to m is
    one row, recorded at load j and superseded at load m + 1."""
    believed: dict[tuple, dt.datetime] = {}
    rows = []
    for belief, at in zip(beliefs, recorded):
        now = {(v.key, tuple(sorted(v.attributes.items())), v.started_at, v.ended_at, v.state) for v in belief}
        for version in [version for version in believed if version not in now]:
            rows.append(BeliefRow(*version, believed.pop(version), at))
        for version in now - believed.keys():
            believed[version] = at
    return rows + [BeliefRow(*version, since) for version, since in believed.items()]


def believed_at(rows: Iterable[BeliefRow], known_at: dt.datetime, at: dt.datetime) -> list[BeliefRow]:
    """The versions valid at business time `at` as believed at `known_at`."""
    return [row for row in rows if row.recorded_at <= known_at and (row.superseded_at is None or known_at < row.superseded_at)
            and row.started_at <= at and (row.ended_at is None or at < row.ended_at)]


UNMODIFIED = "unmod"
TMAX = dt.datetime(9999, 12, 31, 23, 59, 59, 999000)
MILLISECOND = dt.timedelta(milliseconds=1)


@dataclass
class FivetranVersion:
    key: tuple
    data: dict
    start: dt.datetime
    end: dt.datetime
    active: bool
    synced: dt.datetime

    def row(self, columns: Sequence[str] | None = None) -> tuple:
        """The version as a table row: its data in `columns`' order (NULL where it has no
        such column: a column added after it was written), or as it was given."""
        data = self.data.values() if columns is None else [self.data.get(c) for c in columns]
        return (*self.key, *data, self.start, self.end, self.active, self.synced)


@dataclass
class FivetranModel:
    """Fivetran's history mode as the fivetran_history issue settles it, walked event by event."""

    versions: list = field(default_factory=list)

    def apply(self, batch: Sequence[tuple]) -> None:
        """batch: (key tuple, op, start, data dict (UNMODIFIED marks a cell), synced) per event."""
        by_key: dict[tuple, list] = {}
        for event in batch:
            by_key.setdefault(event[0], []).append(event)
        versions_of: dict[tuple, list] = {}
        for version in self.versions:
            versions_of.setdefault(version.key, []).append(version)
        for key, key_events in by_key.items():
            events = sorted(key_events, key=lambda e: e[2])
            starts = [e[2] for e in events if e[1] in ("upsert", "update")]
            earliest = min(starts) if starts else None
            if earliest is not None:
                versions_of[key] = [v for v in versions_of.get(key, []) if v.start < earliest]
            remaining = sorted(versions_of.get(key, []), key=lambda v: v.start)
            base = remaining[-1] if remaining else None
            current = base if base and (base.active or (earliest is not None and base.end >= earliest)) else None
            previous = dict(base.data) if base else None
            for _, op, at, data, synced in events:
                if op == "delete":
                    if current is not None and current.start <= at:
                        current.end, current.active, current = at, False, None
                    continue
                if op == "update" and previous is None:
                    continue
                filled = {c: (previous.get(c) if value == UNMODIFIED else value) for c, value in data.items()}
                if current is not None:
                    current.end, current.active = at - MILLISECOND, False
                current = FivetranVersion(key, filled, at, TMAX, True, synced)
                remaining.append(current)
                previous = filled
            versions_of[key] = remaining
        self.versions = [version for versions in versions_of.values() for version in versions]

    def rows(self, columns: Sequence[str] | None = None) -> list[tuple]:
        return sorted_rows(v.row(columns) for v in self.versions)


def sorted_rows(rows: Iterable[Sequence[Any]]) -> list[tuple]:
    """Rows in a total order, NULLs first, whatever the types."""
    return sorted(rows, key=lambda row: tuple((value is not None, str(value)) for value in row))


TYPE6_SENTINEL = dt.datetime(9999, 12, 31, 23, 59, 59)


@dataclass
class Type6Model:
    """scd_type6's rules for one Type 0, one Type 1 and one Type 2 column with a
    Type 3 previous value, and a Type 2 column `n` that may be added later (NULL in
    the rows before it; NULLs do not count in the row's hash), deletes closing the
    current row."""

    rows: list = field(default_factory=list)

    def load(self, snapshot: Mapping[Any, tuple], at: dt.datetime) -> None:
        for row in self.rows:
            if row["current"] and row["key"] not in snapshot:
                row.update(to=at, current=False, reason="deleted_in_source")
        rows_of: dict[Any, list] = {}
        for row in self.rows:
            rows_of.setdefault(row["key"], []).append(row)
        for key, (t0, t1, t2, *added) in snapshot.items():
            n = added[0] if added else None
            history = sorted(rows_of.get(key, []), key=lambda r: r["version"])
            current = next((r for r in history if r["current"]), None)
            if history and history[-1]["t1"] != t1:
                for row in history:
                    row["t1"] = t1
            if current is not None and row_hash({"t2": current["t2"], "n": current["n"]}) == row_hash({"t2": t2, "n": n}):
                continue
            if current is not None:
                current.update(to=at, current=False)
            self.rows.append({
                "key": key, "t0": history[0]["t0"] if history else t0, "t1": t1, "t2": t2,
                "prev": history[-1]["t2"] if history else None, "from": at, "to": TYPE6_SENTINEL,
                "current": True, "version": len(history) + 1, "reason": "source_load", "n": n,
            })

    def table(self, with_added: bool = False) -> list[tuple]:
        """The rows, with `n` last if the table has that column."""
        return sorted_rows(tuple(value for name, value in r.items() if with_added or name != "n") for r in self.rows)
