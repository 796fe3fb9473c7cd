"""Grading on a Dask distributed cluster, through its futures interface.

The client sends each submission's files (bytes: workers need not see the
client's disk) with the `Selection` (the assignment and its variant), the
--device asked for and the client's grading fingerprint. Each worker binds
that device on its own machine; the client refuses workers that would bind
different ones (some with a GPU, some without, under --device auto).
Each worker process keeps one `Grader` per assignment and variant, made on
its first submission with its own sandbox pool (as many sandboxed runs at
once as the worker has threads) and reused for every later one. The course's
expected values (every check's, and its known mistakes' answers) are computed
once, by the client before the first task (or read from its store), and
shipped to each worker once (`ShippedStore`): no worker runs the reference
for them again. It returns plain data (`Graded.as_dict`); the client writes
every file.

A worker whose fingerprint differs from the client's (another lmgrade,
other checks, another LMGRADE_SECRET) would grade differently: the client
refuses to start with it, and such a worker refuses every submission.
"""

from __future__ import annotations

import json
import tempfile
import threading
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path

from ...boundary import wire
from ...core.device import DeviceError
from ...core.hidden_inputs import hidden_inputs, student_identity
from ...core.seeds import course_secret
from ...core.selection import Selection
from ...declare import catalog
from ...declare.assignment import Assignment
from ...grading.expected_store import ExpectedStore, RecordingStore, default_store
from ...grading.expected_values import ExpectedValues
from ...grading.grader import Grader
from ...grading.oracle import LiveReference
from .content import grading_fingerprint, read_files, write_files
from .executor import Executor, ExecutorError
from .graded import Graded, describe_failure, grade_folder
from .layout import SubmissionFolder

SCHEME = "dask://"
CONNECT_TIMEOUT_S = 30
MISMATCH = (
    "this Dask worker's lmgrade, checks or LMGRADE_SECRET differ from the client's: "
    "install the same lmgrade and set the same LMGRADE_SECRET on every worker"
)


def scheduler_address(spec: str) -> dict:
    """The `distributed.Client` arguments an --executor value names."""
    if spec.startswith(SCHEME):
        host_port = spec[len(SCHEME) :]
        if not host_port or host_port.startswith(":") or "/" in host_port:
            raise ExecutorError(f"--executor {spec}: expected dask://HOST:PORT")
        return {"address": f"tcp://{host_port}"}
    if spec.startswith(("tcp://", "tls://")):
        return {"address": spec}
    if Path(spec).is_file():
        return {"scheduler_file": spec}
    raise ExecutorError(f"--executor {spec}: expected local, dask://HOST:PORT or the path of a Dask scheduler file")


# -- on the worker ---------------------------------------------------------


class ShippedStore(ExpectedStore):
    """The store of a worker's grader: the entries the client shipped with the tasks first, then the worker's
    own store (`default_store`, where it keeps one), which also keeps what the worker computes itself."""

    def __init__(self, entries: dict[str, bytes], own: ExpectedStore | None):
        # The folder the sandbox is kept out of: the worker's own store's, else an empty one of its own.
        super().__init__(own.folder if own is not None else Path(tempfile.mkdtemp(prefix="lmgrade-shipped-")))
        self.entries, self.own = entries, own

    def get(self, key: str):
        blob = self.entries.get(key)
        if blob is not None:
            try:
                return wire.decode(blob)
            except wire.WireError:  # damaged on the way: a miss, as a damaged entry on disk is
                pass
        return self.own.get(key) if self.own is not None else None

    def put(self, key: str, value) -> None:
        if self.own is not None:
            self.own.put(key, value)


_graders: dict[tuple, tuple[Grader, Assignment, dict, str]] = {}
_graders_lock = threading.Lock()


def _worker_threads() -> int:
    from distributed import get_worker

    try:
        return max(1, int(get_worker().state.nthreads))
    except (ValueError, AttributeError):  # not on a worker (called directly)
        return 1


def worker_grader(
    selection: dict, device: str, shipped: dict[str, bytes] | None = None
) -> tuple[Grader, Assignment, dict, str]:
    """This process's grader of `selection` (as `Selection.as_dict` gives it) on `device`, with its fingerprint;
    made on the first call, with the expected values the client `shipped` (store entries by key)."""
    key = (json.dumps(selection, sort_keys=True), device)
    with _graders_lock:
        if key not in _graders:
            assignment, variant = catalog.load(Selection.from_dict(selection))
            secret = course_secret()
            grader = Grader(
                assignment,
                variant,
                LiveReference(assignment.spec),
                secret=secret,
                jobs=_worker_threads(),
                store=ShippedStore(shipped or {}, default_store()),
                device=device,
            )
            fingerprint = grading_fingerprint(assignment, variant, secret, device)
            _graders[key] = (grader, grader.assignment, variant, fingerprint)
        store = _graders[key][0].store
        if shipped and isinstance(store, ShippedStore) and not store.entries:
            store.entries = shipped  # a grader made ahead (`prepare_worker`), before the values came
        return _graders[key]


def prepare_worker(selection: dict, device: str) -> None:
    """Make this worker's grader and start its sandbox pool ahead of its first submission, in a thread of its
    own (the worker answers at once): while the client computes the expected values it ships with the tasks."""

    def prepare() -> None:
        try:
            grader, *_ = worker_grader(selection, device)
            grader.pool.start()
        except Exception:  # said by the first task, which makes the grader again
            pass

    threading.Thread(target=prepare, name="lmgrade-prepare-grader", daemon=True).start()


def worker_fingerprint(selection: dict, device: str) -> dict:
    """What `grading_fingerprint` gives on this worker, and the device it grades on or why it cannot
    (asked before grading)."""
    assignment, variant = catalog.load(Selection.from_dict(selection))
    said = {"fingerprint": grading_fingerprint(assignment, variant, course_secret(), device)}
    try:
        return {**said, "device": assignment.on(device).device}
    except DeviceError as exc:
        return {**said, "device": None, "cannot": str(exc)}


def grade_on_worker(
    selection: dict,
    device: str,
    fingerprint: str,
    files: dict[str, bytes],
    identity: str | None = None,
    per_student: bool = False,
    shipped: dict[str, bytes] | None = None,
) -> dict:
    """Grade one submission, given as its files, with this worker's grader; `Graded` as a dict.

    `per_student`: the hidden checks draw the inputs of the students `identity` names, from this worker's
    secret (the same as the client's: the fingerprints agree). `shipped`: the course's expected values, as
    the client computed them (`course_expected`; sent to each worker once, whatever the tasks).
    """
    try:
        grader, assignment, variant, own = worker_grader(selection, device, shipped)
    except Exception as exc:
        return Graded.failed(exc).as_dict()
    if own != fingerprint:
        return Graded(error=MISMATCH).as_dict()
    with tempfile.TemporaryDirectory(prefix="lmgrade-regrade-") as tmp:
        folder = Path(tmp) / "submission"
        folder.mkdir()
        try:
            write_files(files, folder)
        except (OSError, ValueError) as exc:
            return Graded.failed(exc).as_dict()
        hidden = hidden_inputs(course_secret(), identity, per_student)
        return grade_folder(grader, assignment, variant, folder, hidden)


# -- on the client ---------------------------------------------------------


def course_expected(assignment: Assignment, variant: dict, secret: str, device: str) -> dict[str, bytes]:
    """The store entries of every check's expected values and known mistakes' answers on the course's cases:
    read from the user's store, or computed here once (and kept there). What each worker's grader reads
    instead of running the reference itself. A check bound to a GPU has none (its values are computed on the
    machine that grades it)."""
    try:
        bound = assignment.on(device)
    except DeviceError:  # no GPU here: the workers' CPU checks are this machine's CPU checks
        bound = assignment.on("cpu")
    with tempfile.TemporaryDirectory(prefix="lmgrade-course-expected-") as folder:
        recording = RecordingStore(Path(folder), default_store())
        ExpectedValues(bound, variant, LiveReference(assignment.spec), secret=secret, store=recording).record()
        return {path.stem: path.read_bytes() for path in sorted(Path(folder).rglob("*.wire"))}


class DaskExecutor(Executor):
    """Submissions graded by the workers of a Dask cluster; at most two per worker thread in flight."""

    def __init__(
        self,
        connection: dict,
        assignment: Assignment,
        variant: dict,
        *,
        secret: str,
        device: str = "auto",
        per_student: bool = False,
    ):
        """`assignment` as the catalogue gives it, bound to no device: the workers bind `device`."""
        self.per_student = per_student
        try:
            from distributed import Client
        except ImportError:
            raise ExecutorError("--executor dask needs Dask distributed: pip install 'lmgrade[dask]'") from None
        self.selection, self.device = Selection.of(assignment.name, variant).as_dict(), device
        self.fingerprint = grading_fingerprint(assignment, variant, secret, device)
        where = connection.get("address") or connection.get("scheduler_file")
        try:
            self.client = Client(**connection, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ExecutorError(f"cannot reach the Dask scheduler at {where}: {describe_failure(exc)}") from None
        try:
            self._check_workers()
        except BaseException:
            self.client.close()
            raise
        self.capacity = max(1, sum(self.client.nthreads().values()))
        try:
            self.client.run(prepare_worker, self.selection, self.device)
            # Computed once here, sent once to each worker (a task names it; Dask moves it once per worker).
            expected = course_expected(assignment, variant, secret, device)
            [self.shipped] = self.client.scatter([expected], broadcast=True, hash=False)
        except BaseException:
            self.client.close()
            raise

    def _check_workers(self) -> None:
        try:
            self.client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
        except TimeoutError:
            raise ExecutorError(f"no Dask worker joined the scheduler within {CONNECT_TIMEOUT_S} s") from None
        try:
            found = self.client.run(worker_fingerprint, self.selection, self.device)
        except Exception as exc:
            raise ExecutorError(f"the Dask workers cannot run lmgrade: {describe_failure(exc)}") from None
        differing = sorted(worker for worker, said in found.items() if said["fingerprint"] != self.fingerprint)
        if differing:
            raise ExecutorError(f"{MISMATCH} (differing: {', '.join(differing[:3])})")
        unusable = [said["cannot"] for _, said in sorted(found.items()) if said["device"] is None]
        if unusable:
            raise ExecutorError(f"a Dask worker cannot grade with --device {self.device}: {unusable[0]}")
        devices: dict[str, list[str]] = {}
        for worker, said in sorted(found.items()):
            devices.setdefault(said["device"], []).append(worker)
        if len(devices) > 1:
            where = "; ".join(f"{device} on {', '.join(workers[:3])}" for device, workers in devices.items())
            raise ExecutorError(
                f"the Dask workers would grade on different devices ({where}): "
                "give --device cpu, or --device cuda with a GPU on every worker"
            )

    def grade(self, submissions: Iterable[SubmissionFolder]) -> Iterator[tuple[SubmissionFolder, Graded]]:
        from distributed import as_completed

        waiting = iter(submissions)
        in_flight: dict = {}
        finished = as_completed()

        def send(submission: SubmissionFolder) -> Graded | None:
            """Hand `submission` to the cluster; its grade right away if its files cannot be read."""
            try:
                files = read_files(submission.folder)
            except OSError as exc:
                return Graded.failed(exc)
            future = self.client.submit(
                grade_on_worker,
                self.selection,
                self.device,
                self.fingerprint,
                files,
                student_identity(submission.students),
                self.per_student,
                self.shipped,
                key=f"lmgrade-regrade-{uuid.uuid4().hex}",
                pure=False,
            )
            in_flight[future] = submission
            finished.add(future)
            return None

        def top_up() -> Iterator[tuple[SubmissionFolder, Graded]]:
            # A window of submissions in flight: the client never holds every file at once.
            while len(in_flight) < 2 * self.capacity:
                submission = next(waiting, None)
                if submission is None:
                    return
                unread = send(submission)
                if unread is not None:
                    yield submission, unread

        try:
            yield from top_up()
            while in_flight:
                future = next(finished)
                submission = in_flight.pop(future)
                try:
                    graded = Graded.from_dict(future.result())
                except Exception as exc:  # the worker died, or the task could not run there
                    graded = Graded.failed(exc)
                yield submission, graded
                yield from top_up()
        finally:
            if in_flight:
                self.client.cancel(list(in_flight))

    def close(self) -> None:
        self.client.close()
