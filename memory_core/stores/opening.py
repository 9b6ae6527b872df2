"""How every read opens one of Mycel's files: read-only, under the reader's time limit and row cap.

Every failure inside a read becomes a StoreProblem (missing, locked, damaged, unknown layout), so a page
or the CLI can say what is wrong and go on with the rest.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from memory_core.records import ProblemKind, StoreProblem
from memory_core.stores.locations import MycelLocations, StoreRole
from memory_core.stores.schema import checkpoint_layout_problem
from memory_core.stores.sqlite.connect import ReadOnlyDB, StoreError, open_readonly

FileIdentity = tuple[str, int, int]  # path, device, inode


@dataclass(frozen=True, slots=True)
class StoreOpener:
    locations: MycelLocations
    query_timeout_s: float
    row_cap: int

    @contextmanager
    def open(self, role: StoreRole, problems: list[StoreProblem]) -> Iterator[ReadOnlyDB | None]:
        """A read-only connection, or None; every failure inside the block becomes a problem."""
        path = self.locations.path(role)
        try:
            db = open_readonly(path, store=role.value, timeout_s=self.query_timeout_s, row_cap=self.row_cap)
        except StoreError as exc:
            problems.append(exc.problem)
            yield None
            return
        try:
            yield db
        except StoreError as exc:
            problems.append(exc.problem)
        except Exception as exc:  # noqa: BLE001 - bad data must become a message, never a crash
            problems.append(StoreProblem(ProblemKind.CORRUPT, role.value, f"{path.name}: {exc}", path))
        finally:
            problems.extend(db.problems)
            db.conn.close()


def check_checkpoint_layout(db: ReadOnlyDB) -> None:
    """Refuse (as a problem) a checkpoints layout we do not know, rather than misread it."""
    why = checkpoint_layout_problem(db.tables())
    if why is not None:
        raise StoreError(StoreProblem(ProblemKind.UNKNOWN_SCHEMA, db.store, f"{db.path.name} {why}", db.path))


def identity_of(path: Path) -> FileIdentity:
    # A replaced file (new inode) never reuses what was derived from the old one.
    try:
        stat = path.stat()
    except OSError:
        return (str(path), 0, 0)
    return (str(path), stat.st_dev, stat.st_ino)


def unless_found(problems: list[StoreProblem], found: bool) -> list[StoreProblem]:
    """Missing files/tables are expected in one of two places; report them only if neither had the table."""
    if not found:
        return problems
    return [p for p in problems if p.kind not in (ProblemKind.MISSING_FILE, ProblemKind.MISSING_TABLE)]
