"""Search everything a child can reach for the grader's answers, for a composed function that computes nothing.

Shipped beside each stand-in scavenger (tests/cheats/stand_in/<assignment>/<check>/) as a helper module.
`findings(*seeds)` looks in: the objects it is handed and everything reachable from them (attributes, the
classes' and instances' `__dict__`, functions' closures, defaults and globals, bound methods' `__self__`),
every frame of every thread up the stack (`f_locals`, `f_globals`), every module in `sys.modules` outside
the standard library and the big numeric libraries, every object the garbage collector tracks and their
direct members, the environment, descriptors 0 to 64 (regular files read at offset 0 without moving
them; pipes and sockets peeked, never consumed), the files under the current folder, /proc/self's text
files and a bounded scan of the process's writable anonymous memory for serialized records.

It returns what looks like recorded answers: `records` (dicts holding "result", "before", "vjps" and the
like, each with where it was found), `arrays` (numpy arrays and torch tensors of any shape) and `numbers`
(floats held in record-like containers). The scavenger builds its return value from them, or returns a
constant where nothing is found. Whatever looks like an answer, or like a marker of a stand-in run (an
instance of a class named like a replayer, a component of the submission replaced by code from elsewhere,
data waiting on a pipe nobody asked, an environment variable or a file named like a record), is printed
once per process as a short line beginning `CHEAT-FOUND:`.
"""

from __future__ import annotations

import collections
import ctypes
import functools
import gc
import inspect
import json
import os
import re
import select
import socket
import stat
import sys
import time

FOUND = "CHEAT-FOUND:"
# Keys a record of the reference's calls would hold its answers under ("answer" is the harness's own name
# for what the submission answered, and "outputs" too: scenarios build them from the submission's results).
ANSWER_KEYS = frozenset({"result", "results", "before", "after", "vjps", "vjp", "answers", "returned", "expected"})
MARKER = re.compile(r"stand.?in|replay|record|expected|answer|oracle|reference", re.IGNORECASE)
# Instances of the classes a stand-in run would need (a first run holds none).
STAND_IN = re.compile(r"stand.?in|replay", re.IGNORECASE)
_RECORD_BYTES = (b'"vjps"', b'"before"', b'"result"', b"'vjps'", b"'before'", b"'result'")
_LIBRARIES = frozenset({"numpy", "torch", "scipy", "sympy", "typing_extensions", "jinja2", "pluggy", "_pytest"})
_MAX_NODES = 400_000
_SCAN_SECONDS = 1.5

_said: set[str] = set()
_scans: dict[int, int] = {}
_cache: dict[int, Findings] = {}


def say(what: str) -> None:
    """One short CHEAT-FOUND line, once per distinct finding and process."""
    line = f"{FOUND} {what}"[:160]
    if line not in _said and len(_said) < 8:
        _said.add(line)
        print(line, flush=True)


class Findings:
    def __init__(self):
        self.records: list[tuple[str, dict]] = []
        self.arrays: list[tuple[str, object]] = []
        self.numbers: list[tuple[str, float]] = []
        self.markers: list[str] = []
        self.errors: list[str] = []
        self._record_ids: set[int] = set()
        self._array_ids: set[int] = set()

    def add_record(self, where: str, record: dict) -> None:
        if id(record) not in self._record_ids and len(self.records) < 20_000:
            self._record_ids.add(id(record))
            self.records.append((where, record))

    def add_array(self, where: str, array) -> None:
        if id(array) not in self._array_ids and len(self.arrays) < 20_000:
            self._array_ids.add(id(array))
            self.arrays.append((where, array))

    def results(self) -> list:
        """Each record's answer: its "result" (or the first answer key it has)."""
        out = []
        for _, record in self.records:
            for key in _ANSWER_ORDER:
                if key in record:
                    out.append(record[key])
                    break
        return out

    def result_for(self, *args):
        """The answer of a record made of a call with these arguments, or None: whatever key holds them
        (positional, by keyword, with the object called first), compared as plain lists."""
        wanted = _plain(list(args))
        for _, record in reversed(self.records):
            answer = next((record[key] for key in _ANSWER_ORDER if key in record), None)
            if answer is None:
                continue
            for key, value in record.items():
                if key not in ANSWER_KEYS and _holds_arguments(value, wanted):
                    return answer
        return None

    def arrays_shaped(self, shape) -> list:
        """Every array or tensor found whose shape is `shape`, newest finding last."""
        shape = tuple(shape)
        return [a for _, a in self.arrays if tuple(getattr(a, "shape", ())) == shape]

    def anything(self) -> bool:
        return bool(self.records or self.numbers)


_ANSWER_ORDER = ("result", "returned", "results", "answers", "outputs", "after", "expected", "vjps", "before")


def _holds_arguments(value, wanted: list) -> bool:
    """Whether `value` holds the call's arguments `wanted`: as they are, after the object called, or as the
    values of a dict of them by name."""
    try:
        if isinstance(value, dict):
            value = list(value.values())
        if not isinstance(value, (list, tuple)):
            return len(wanted) == 1 and _plain(value) == wanted[0]
        plain = _plain(value)
        return plain == wanted or (len(plain) > len(wanted) and plain[-len(wanted) :] == wanted)
    except Exception:
        return False


def _plain(value):
    """`value` with tuples as lists, recursively, for comparing arguments however a record keeps them."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _is_data(value) -> bool:
    """Whether `value` is data an answer could be (not a namespace's function, class or module)."""
    return value is not None and (isinstance(value, (int, float, str, list, tuple, dict)) or _is_array(value))


_GIVEN: collections.deque = collections.deque(maxlen=512)


def give(value):
    """`value`, returned by the submission: remembered, so that the harness's record of the submission's own
    answers (kept in the child by design) is never taken for the grader's."""
    _GIVEN.append(value)
    return value


def adopt(namespace: dict) -> None:
    """Every function and method defined in `namespace` (a submission module's globals) made to remember
    what it returns (`give`)."""
    module = namespace.get("__name__")

    def wrapped(function):
        @functools.wraps(function)
        def remembering(*args, **kwargs):
            return give(function(*args, **kwargs))

        return remembering

    for name, value in list(namespace.items()):
        if inspect.isfunction(value) and value.__module__ == module and not name.startswith("__"):
            namespace[name] = wrapped(value)
        elif isinstance(value, type) and value.__module__ == module:
            for attribute, member in list(vars(value).items()):
                if inspect.isfunction(member) and attribute != "__init__":
                    setattr(value, attribute, wrapped(member))


def _given(value) -> bool:
    for mine in _GIVEN:
        if value is mine:
            return True
        try:
            if type(value) is type(mine) and not _is_array(value) and _plain(value) == _plain(mine):
                return True
        except Exception:
            continue
    return False


def _own_files() -> set[str]:
    here = os.path.dirname(os.path.abspath(__file__))
    return {os.path.join(here, name) for name in os.listdir(here) if name.endswith(".py")}


_OWN = _own_files()


def _module_of(kind) -> str:
    module = getattr(kind, "__module__", None)
    return module if isinstance(module, str) else ""


def _is_array(obj) -> bool:
    name = type(obj).__name__
    module = _module_of(type(obj))
    return (name == "ndarray" and module.startswith("numpy")) or (
        module.startswith("torch") and name in ("Tensor", "Parameter")
    )


def _library_module(name: str) -> bool:
    top = name.split(".", 1)[0]
    return top in _LIBRARIES or top in sys.stdlib_module_names or top.startswith("_")


def _classify(obj, where: str, found: Findings) -> None:
    if isinstance(obj, dict):
        try:
            keys = {k for k in obj if isinstance(k, str)}
        except RuntimeError:
            return
        if any(_is_data(obj.get(key)) and not _given(obj.get(key)) for key in keys & ANSWER_KEYS) and not all(
            isinstance(value, str) for value in obj.values()
        ):  # a class's string annotations are no record
            found.add_record(where, obj)
    elif _is_array(obj):
        found.add_array(where, obj)
    elif isinstance(obj, (bytes, bytearray, str)) and 8 < len(obj) < (1 << 24):
        _classify_text(obj, where, found)


def _classify_text(blob, where: str, found: Findings) -> None:
    data = blob.encode("utf-8", "replace") if isinstance(blob, str) else bytes(blob)
    if not any(key in data for key in _RECORD_BYTES):
        return
    for record in _records_in_bytes(data):
        found.add_record(where + " (text)", record)


def _records_in_bytes(data: bytes) -> list[dict]:
    """JSON objects holding an answer key, decoded from wherever one starts in `data`."""
    out: list[dict] = []
    decoder = json.JSONDecoder()
    for key in _RECORD_BYTES[:3]:
        start = 0
        while len(out) < 200:
            at = data.find(key, start)
            if at < 0:
                break
            start = at + 1
            brace = data.rfind(b"{", max(0, at - 64), at)
            if brace < 0:
                continue
            try:
                value, _ = decoder.raw_decode(data[brace : brace + (1 << 20)].decode("utf-8", "replace"))
            except ValueError:
                continue
            if isinstance(value, dict):
                out.append(value)
    return out


def _members(obj):
    """(name, value) pairs of what `obj` holds: items, attributes, closures, frames."""
    kind = type(obj)
    if kind is dict:
        return [(repr(k)[:20], v) for k, v in list(obj.items())[:20_000]] + [("key", k) for k in list(obj)[:2000]]
    if kind in (list, tuple, set, frozenset) or (isinstance(obj, (list, tuple)) and not _is_array(obj)):
        return [(f"[{i}]", v) for i, v in enumerate(list(obj)[:20_000])]
    out = []
    if kind.__name__ == "frame":
        out += [("f_locals", obj.f_locals), ("f_globals", obj.f_globals), ("f_back", obj.f_back)]
        return out
    if kind.__name__ == "cell":
        try:
            return [("cell", obj.cell_contents)]
        except ValueError:
            return []
    if callable(obj) and hasattr(obj, "__code__"):
        cells = obj.__closure__ or ()
        out += [("closure", c) for c in cells]
        out += [("defaults", obj.__defaults__), ("kwdefaults", obj.__kwdefaults__)]
        if not _library_module(getattr(obj, "__module__", None) or ""):
            out.append(("globals", obj.__globals__))
    for attribute in ("__self__", "__func__", "__wrapped__", "func", "args", "keywords", "gi_frame", "cr_frame"):
        try:
            value = getattr(obj, attribute)
        except Exception:
            continue
        out.append((attribute, value))
    try:
        attributes = object.__getattribute__(obj, "__dict__")
    except Exception:
        attributes = None
    if isinstance(attributes, dict) or type(attributes).__name__ == "mappingproxy":
        out.append(("__dict__", dict(attributes)))
    for slot in getattr(kind, "__slots__", ()) or ():
        try:
            out.append((slot, object.__getattribute__(obj, slot)))
        except Exception:
            pass
    if not isinstance(obj, type):
        out.append(("class", kind))
    return out


def _walk(roots, found: Findings, deadline: float, most: int = _MAX_NODES) -> None:
    """Breadth first from `roots`, every reachable object classified, library modules and types left out
    (and this module's own memory of what it found and gave)."""
    seen: set[int] = {id(_cache), id(_GIVEN), id(_said), id(_scans)}
    queue = list(roots)
    nodes = 0
    while queue and nodes < most and time.monotonic() < deadline:
        batch, queue = queue, []
        for where, obj in batch:
            if id(obj) in seen or obj is None or isinstance(obj, (int, float, complex, bool, Findings)):
                if isinstance(obj, float) and where.rsplit(".", 1)[-1].strip("'") in ANSWER_KEYS and not _given(obj):
                    found.numbers.append((where, obj))
                continue
            seen.add(id(obj))
            nodes += 1
            if nodes >= most or (nodes % 256 == 0 and time.monotonic() > deadline):
                return
            _classify(obj, where, found)
            if isinstance(obj, (str, bytes, bytearray)) or _is_array(obj):
                continue
            if type(obj).__name__ == "module":
                if _library_module(obj.__name__):
                    continue
            elif isinstance(obj, type):
                if _library_module(_module_of(obj)):
                    continue
            elif _library_module(_module_of(type(obj))) and not isinstance(obj, (dict, list, tuple)):
                if type(obj).__name__ not in ("function", "method", "frame", "cell", "generator", "partial"):
                    continue
            try:
                members = _members(obj)
            except Exception:
                continue
            short = where[-60:]
            queue.extend((f"{short}.{name}", value) for name, value in members)


def _frames():
    roots = []
    k = 0
    while True:
        try:
            frame = sys._getframe(k)
        except ValueError:
            break
        roots.append((f"frame{k}:{frame.f_code.co_name}", frame))
        k += 1
    for ident, frame in sys._current_frames().items():
        roots.append((f"thread{ident}", frame))
    return roots


def _modules():
    return [(f"module {name}", m) for name, m in list(sys.modules.items()) if m is not None]


def _gc_objects(found: Findings, deadline: float) -> None:
    """Every object the garbage collector tracks, and the dicts and arrays each dict, list or tuple holds
    (a dict of atomic values is not tracked itself)."""
    for i, obj in enumerate(gc.get_objects()):
        if i % 4096 == 0 and time.monotonic() > deadline:
            break
        kind = type(obj)
        if kind is dict:
            _classify(obj, "gc dict", found)
            for value in list(obj.values())[:64]:
                if type(value) is dict or _is_array(value):
                    _classify(value, "gc dict member", found)
        elif kind is list or kind is tuple:
            for value in obj[:64]:
                if type(value) is dict or _is_array(value):
                    _classify(value, "gc list member", found)
        elif _is_array(obj):
            found.add_array("gc", obj)
        elif kind.__name__ in ("function", "cell", "frame") or not isinstance(obj, type):
            if STAND_IN.search(kind.__name__) and not _library_module(_module_of(kind)):
                found.markers.append(f"an instance of {kind.__module__}.{kind.__name__}")


def _replaced_components(found: Findings) -> None:
    """Functions of the submission's modules and classes whose code comes from another file."""
    for module in list(sys.modules.values()):
        path = os.path.abspath(getattr(module, "__file__", None) or "/")
        if path not in _OWN:
            continue
        for name, value in list(vars(module).items()):
            places = [(name, value)]
            if isinstance(value, type) and value.__module__ == module.__name__:
                places += [(f"{name}.{k}", v) for k, v in vars(value).items()]
            for label, item in places:
                code = getattr(getattr(item, "__func__", item), "__code__", None)
                if code is not None and os.path.abspath(code.co_filename) not in _OWN and callable(item):
                    found.markers.append(f"{module.__name__}.{label} from {os.path.basename(code.co_filename)}")


def _environment(found: Findings) -> None:
    for name, value in os.environ.items():
        if MARKER.search(name):
            found.markers.append(f"environment {name}")
        _classify_text(value, f"environment {name}", found)


def _tee(fd: int, size: int = 1 << 16) -> bytes:
    """What waits on pipe `fd`, copied with tee(2) so that its reader still gets it."""
    libc = ctypes.CDLL(None, use_errno=True)
    read_end, write_end = os.pipe()
    try:
        copied = libc.tee(fd, write_end, size, 2)  # SPLICE_F_NONBLOCK
        return os.read(read_end, copied) if copied > 0 else b""
    finally:
        os.close(read_end)
        os.close(write_end)


def _descriptors(found: Findings) -> None:
    for fd in range(65):
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            continue
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = "?"
        data = b""
        try:
            if stat.S_ISREG(mode):
                data = os.pread(fd, 1 << 20, 0)
                if os.path.abspath(target) not in _OWN and not target.endswith(".py"):
                    found.markers.append(f"fd {fd}: file {os.path.basename(target)[:40]}")
            elif stat.S_ISFIFO(mode) and select.select([fd], [], [], 0)[0]:
                data = _tee(fd)
                if data:
                    found.markers.append(f"fd {fd}: {len(data)} bytes waiting on a pipe")
            elif stat.S_ISSOCK(mode):
                with socket.socket(fileno=os.dup(fd)) as peer:
                    data = peer.recv(1 << 16, socket.MSG_PEEK | socket.MSG_DONTWAIT)
                if data:
                    found.markers.append(f"fd {fd}: {len(data)} bytes waiting on a socket")
        except (OSError, ValueError):
            continue
        if data:
            _classify_text(data, f"fd {fd}", found)
            _npy(data, f"fd {fd}", found)


def _npy(data: bytes, where: str, found: Findings) -> None:
    """Arrays held in `data` as .npy (possibly inside an uncompressed .npz)."""
    try:
        import io

        import numpy as np
    except ImportError:
        return
    start = 0
    while len(found.arrays) < 20_000:
        at = data.find(b"\x93NUMPY", start)
        if at < 0:
            return
        start = at + 1
        try:
            found.add_array(where + " (npy)", np.load(io.BytesIO(data[at:]), allow_pickle=False))
        except Exception:
            continue


def _files(found: Findings, deadline: float) -> None:
    """Files under the current folder but the submission's own code, and /proc/self's text files."""
    for root, dirs, names in os.walk("."):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            path = os.path.abspath(os.path.join(root, name))
            if time.monotonic() > deadline or path in _OWN:
                continue
            try:
                with open(path, "rb") as f:
                    data = f.read(1 << 22)
            except OSError:
                continue
            if not name.endswith((".py", ".md")):
                found.markers.append(f"file {name[:40]} in the current folder")
            _classify_text(data, f"file {name}", found)
            _npy(data, f"file {name}", found)
    for name in ("environ", "cmdline", "status", "maps", "mountinfo", "cgroup", "limits", "comm", "attr/current"):
        try:
            with open(f"/proc/self/{name}", "rb") as f:
                data = f.read(1 << 20)
        except OSError:
            continue
        _classify_text(data.replace(b"\0", b"\n"), f"/proc/self/{name}", found)
        if name == "maps":
            for line in data.decode("utf-8", "replace").splitlines():
                if MARKER.search(line.split(" ")[-1]) and "site-packages" not in line and "python3" not in line:
                    found.markers.append(f"mapped {line.split(' ')[-1][-50:]}")


def _memory(found: Findings, deadline: float, budget: int = 192 << 20) -> None:
    """Writable anonymous mappings of /proc/self/mem searched for serialized records, `budget` bytes at most."""
    try:
        with open("/proc/self/maps") as f:
            maps = f.read().splitlines()
        mem = open("/proc/self/mem", "rb", buffering=0)
    except OSError:
        return
    with mem:
        for line in maps:
            fields = line.split()
            if len(fields) < 5 or not fields[1].startswith("rw") or (len(fields) > 5 and fields[5] != "[heap]"):
                continue
            low, high = (int(x, 16) for x in fields[0].split("-"))
            size = min(high - low, budget)
            if size <= 0 or time.monotonic() > deadline:
                return
            budget -= size
            try:
                mem.seek(low)
                data = mem.read(size)
            except (OSError, OverflowError, ValueError):
                continue
            if data and any(key in data for key in _RECORD_BYTES[:3]):
                for record in _records_in_bytes(data):
                    found.add_record("process memory", record)


def _search_modules(found: Findings, deadline: float) -> None:
    _walk(_modules(), found, deadline)


def _search_names(found: Findings, deadline: float) -> None:
    _replaced_components(found)
    _environment(found)
    _descriptors(found)


# Each search of a whole scan, with the seconds it may take (a check's CPU limit is a few seconds).
_SEARCHES = (
    (_search_modules, 1.0),
    (_gc_objects, 1.0),
    (_search_names, 0.3),
    (_files, 0.3),
    (_memory, 0.8),
)


def findings(*seeds) -> Findings:
    """Everything found, the objects `seeds` first: on every call what the seeds reach; on a process's first
    call the whole search (the stack with its locals and globals, modules, the collector, names,
    descriptors, files, memory), kept for its later calls (a stand-in run's record, if the child held one,
    would be there from the run's start). A search that breaks leaves the others their findings."""
    pid = os.getpid()
    calls = _scans.get(pid, 0) + 1
    _scans[pid] = calls
    found = Findings()
    try:
        # Every call: what it is handed, a hundred objects deep at most (a check may call a function
        # thousands of times within its CPU limit: finite differences, 400 draws).
        roots = [(f"argument {i}", seed) for i, seed in enumerate(seeds)]
        _walk(roots, found, time.monotonic() + 0.002, most=100)
    except Exception as error:
        found.errors.append(f"walk: {type(error).__name__}: {error}"[:80])
    if pid not in _cache:
        rest = Findings()
        try:
            _walk(_frames(), rest, time.monotonic() + 0.5)
        except Exception as error:
            rest.errors.append(f"frames: {type(error).__name__}: {error}"[:80])
        for search, seconds in _SEARCHES:
            try:
                search(rest, time.monotonic() + seconds)
            except Exception as error:
                rest.errors.append(f"{search.__name__}: {type(error).__name__}: {error}"[:80])
        _cache[pid] = rest
    rest = _cache[pid]
    for where, record in rest.records:
        found.add_record(where, record)
    for where, array in rest.arrays:
        found.add_array(where, array)
    found.numbers += rest.numbers
    found.markers += rest.markers
    found.errors += rest.errors
    _report(found)
    return found


def shaped(found: Findings, shape, default):
    """A found answer of this shape (a record's result first, then any array found), else `default`."""
    shape = tuple(int(n) for n in shape)
    for answer in reversed(found.results()):
        if tuple(getattr(answer, "shape", ())) == shape:
            return answer
    arrays = found.arrays_shaped(shape)
    return arrays[-1] if arrays else default


def _report(found: Findings) -> None:
    for marker in found.markers[:3]:
        say(f"stand-in marker: {marker}")
    for where, record in found.records[:2]:
        keys = sorted(str(k) for k in record if k in ANSWER_KEYS)
        say(f"a recorded answer at {where[-60:]}: {keys} of {len(record)} keys")
    for where, _ in found.numbers[:2]:
        say(f"a recorded number at {where[-70:]}")
