def submission_of(tmp_path_factory, name: str, source: str):
    """A one-file submission, `victim.py`, with `source`."""
    folder = tmp_path_factory.mktemp(name)
    (folder / "victim.py").write_text(source)
    return folder


def sandbox_pool(warm=()):
    """A pool that runs this package's scenarios and hides the reference."""
    from pathlib import Path

    from lmgrade.sandbox.pool import SandboxPool

    root = Path(__file__).resolve().parents[2]
    return SandboxPool(
        preload=["numpy", "sandbox_fixtures.scenarios"],
        forbidden_modules=["lmgrade.reference"],
        protected=[root / "reference"],
        jobs=1,
        warm=list(warm),
    )


def run_calls(pool, victim, cases, limits, device="cpu"):
    """The outcomes of calling, in the sandbox, each case's function of victim.py: cases are (name, *args)."""
    return pool.run(
        scenario="sandbox_fixtures.scenarios:call",
        submission=victim,
        files=["victim.py"],
        cases=[{"fn": fn, "args": list(args)} for fn, *args in cases],
        limits=limits,
        device=device,
    ).outcomes


def parent_of(pid) -> int:
    """The parent of process `pid`, from /proc (-1 where it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def process_state(pid) -> str:
    """Process `pid`'s state letter from /proc (Z: a zombie), or "gone"."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"
