"""What confines the kernel: Linux namespaces and a read-only view of the file system, then resource limits.

Two levels (``LEVELS``, weakest first):

``rlimits``
    The kernel runs as the worker's user in the worker's namespaces, in its own session, with resource limits
    (``apply_limits``). It can read what that user can read and signal that user's processes: a crash barrier,
    not a security boundary.
``namespaces``
    The kernel is started by this module's launcher (``python -m env_core.sandbox.isolation SPEC``) in fresh user,
    mount, PID, network, IPC and UTS namespaces (``unshare(2)``), as an unprivileged user (uid 1000 inside; outside,
    the worker's own uid, or ``nobody`` when the worker is root), with no capabilities and ``no_new_privs``. Its
    root is a tmpfs holding read-only binds of the operating system (``/usr``, ``/lib*``, ``/bin``, ``/sbin``, a few
    files of ``/etc``), the Python installation (its site-packages hidden) and the kernel's own package, a private
    ``/proc`` and a read-only ``/dev``, and one writable, size-limited ``/tmp``. It has no network device but a
    loopback that is down, cannot see or signal any process outside its PID namespace, and dies whole: killing its
    first process (PID 1 of the namespace) kills every process in it, whatever their session or process group. On
    x86-64 and ARM64 it starts under the seccomp filter of ``seccomp``, installed last, just before exec.

Launch handshake (namespaces), on the launcher's stdin/stdout before the kernel protocol starts:

    launcher -> host: {"op": "unshared"}      the namespaces exist; the host writes uid_map/gid_map for them
    host -> launcher: {"op": "mapped"}
    launcher -> host: {"op": "launched", "pid": P}   P: the kernel's PID as the host sees it

The launcher then waits for the kernel and exits with its status; the kernel reads ``init`` on the same pipe.

Standard library only: this module runs before the kernel exists, and inside it (``apply_limits``).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import json
import os
import platform
import resource
import select
import signal
import stat
import sys
from typing import Any

from undertow.env_core.sandbox import seccomp

LEVELS = ("rlimits", "namespaces")  # weakest first
SETUP_FAILED = "sandbox set-up failed: "
SANDBOX_UID = 1000  # the kernel's uid and gid inside its user namespace
NOBODY = 65534  # what the kernel is outside when the worker is root: never the worker's own uid 0

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
NAMESPACES = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}  # syscall numbers; other machines fall back to chroot

# Read-only binds of the operating system: what an interpreter and its shared libraries need, nothing of /home,
# /root, /srv, /var, /opt, /work or /mnt, where suites, run stores, credentials and projects live.
SYSTEM_PATHS = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin")
ETC_FILES = ("ld.so.cache", "ld.so.conf", "localtime", "nsswitch.conf", "mime.types")
DEVICES = ("null", "zero", "full", "random", "urandom")


class IsolationError(OSError):
    """A step of setting up the namespaces or the file-system view failed (the level is then not available)."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise IsolationError(errno, f"{what}: {os.strerror(errno)}")


# -- resource limits (both levels; applied by the kernel itself before any agent code runs)


def apply_limits(limits: dict[str, Any]) -> None:
    """Lower this process's rlimits to ``limits`` (never above a hard limit): address space, CPU seconds, file
    size, open files, processes, no core files. A write past the file-size limit fails with EFBIG instead of
    killing the process."""

    def limit(which: int, value: int, hard: int | None = None) -> None:
        hard = value if hard is None else hard
        _, current_hard = resource.getrlimit(which)
        if current_hard != resource.RLIM_INFINITY:  # never try to raise a hard limit
            value, hard = min(value, current_hard), min(hard, current_hard)
        resource.setrlimit(which, (value, hard))

    memory = int(limits["memory_mb"]) * 1024 * 1024
    limit(resource.RLIMIT_AS, memory)
    cpu = int(limits["cpu_s"])
    limit(resource.RLIMIT_CPU, cpu, cpu + 5)  # SIGXCPU first, SIGKILL 5 s later
    limit(resource.RLIMIT_FSIZE, int(limits["file_size_mb"]) * 1024 * 1024)
    limit(resource.RLIMIT_CORE, 0)
    limit(resource.RLIMIT_NOFILE, int(limits["open_files"]))
    if limits.get("processes"):
        # Counted per user and user namespace: with namespaces it counts this kernel's processes (and threads) only
        limit(resource.RLIMIT_NPROC, int(limits["processes"]))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


# -- the host's part: uid and gid maps for a launcher's new user namespace


def outside_ids() -> tuple[int, int]:
    """The uid and gid the kernel has outside its namespace: the worker's own, or ``nobody`` for a root worker."""
    uid, gid = os.geteuid(), os.getegid()
    return (NOBODY, NOBODY) if uid == 0 else (uid, gid)


def write_id_maps(pid: int) -> None:
    """Map the sandbox uid/gid of ``pid``'s new user namespace to ``outside_ids()``. Run by the host (it holds the
    right to map ids in the parent namespace; the launcher inside does not)."""
    uid, gid = outside_ids()
    if os.geteuid() != 0:  # an unprivileged user must give up setgroups before mapping its gid
        with open(f"/proc/{pid}/setgroups", "w") as handle:
            handle.write("deny")
    with open(f"/proc/{pid}/uid_map", "w") as handle:
        handle.write(f"{SANDBOX_UID} {uid} 1\n")
    with open(f"/proc/{pid}/gid_map", "w") as handle:
        handle.write(f"{SANDBOX_UID} {gid} 1\n")


# -- the launcher (namespaces level), run as ``python -m undertow.env_core.sandbox.isolation SPEC``


class _Mounts:
    def __init__(self) -> None:
        self.libc = _libc()
        self.libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
        self.libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]

    def mount(self, source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
        _check(self.libc.mount(_bytes(source), _bytes(target), _bytes(fstype), flags, _bytes(data)), f"mount {target}")

    def bind_read_only(self, source: str, target: str) -> None:
        """Bind ``source`` at ``target`` read-only, its sub-mounts too. Flags the original mount locks (nosuid,
        nodev, noexec) are kept: a user namespace may not drop them."""
        self.mount(source, target, None, MS_BIND | MS_REC)
        for point in [target, *_submounts(target)]:
            try:
                locked = _statvfs_flags(point)
            except OSError:
                continue
            self.mount(None, point, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | locked)

    def tmpfs(self, target: str, size_mb: int, mode: str = "755", read_only: bool = False) -> None:
        flags = MS_NOSUID | MS_NODEV | (MS_RDONLY if read_only else 0)
        self.mount("tmpfs", target, "tmpfs", flags, f"size={max(1, size_mb)}m,mode={mode}")


def _bytes(text: str | None) -> bytes | None:
    return text.encode() if text is not None else None


def _statvfs_flags(path: str) -> int:
    flags = os.statvfs(path).f_flag
    return (
        (MS_NODEV if flags & os.ST_NODEV else 0)
        | (MS_NOEXEC if flags & os.ST_NOEXEC else 0)
        | (MS_NOSUID if flags & os.ST_NOSUID else 0)
    )


def _submounts(target: str) -> list[str]:
    prefix = target.rstrip("/") + "/"
    points = []
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            point = line.split()[4].replace("\\040", " ")
            if point.startswith(prefix):
                points.append(point)
    return points


def _make_parent_dirs(root: str, path: str) -> str:
    inside = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(inside), exist_ok=True)
    return inside


def _inside_any(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _collect(spec: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """What the view will show, looked up with the launcher's own ids (the sandbox user may not traverse, say, a
    root-only home that holds the interpreter): ``(link, path, target)``, or ``(dir|file|device, path, fd)`` with an
    O_PATH descriptor that the mount uses later."""
    entries: list[tuple[str, str, Any]] = []
    shown: list[str] = []

    def add(path: str, kind: str | None = None) -> None:
        if os.path.islink(path) and kind is None:
            entries.append(("link", path, os.readlink(path)))
            return
        real = os.path.realpath(path)
        if not os.path.exists(real) or _inside_any(real, shown):
            return
        fd = os.open(real, os.O_PATH | os.O_CLOEXEC)
        entries.append((kind or ("dir" if os.path.isdir(real) else "file"), path, fd))
        if kind is None:
            shown.append(real)

    for path in (*SYSTEM_PATHS, *spec["python_paths"]):
        add(path)
    for name in ETC_FILES:
        add(os.path.join("/etc", name))
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}") and stat.S_ISCHR(os.stat(f"/dev/{name}").st_mode):
            add(f"/dev/{name}", "device")
    add(spec["package_dir"], "package")
    # Installed packages, the project and the worker's virtual environment stay hidden even where they sit inside a
    # tree the view shows (say, undertow installed into /usr/local)
    for hidden in spec["hidden_paths"]:
        real = os.path.realpath(hidden)
        if _inside_any(real, shown) and os.path.isdir(real):
            entries.append(("hidden", real, None))
    return entries


def build_view(spec: dict[str, Any]) -> None:
    """Make this process's root the sandbox's view of the file system (see the module docstring). Needs the
    capabilities of a fresh user namespace that owns the current mount namespace; run before dropping them."""
    mounts = _Mounts()
    mounts.mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing below propagates back to the host
    entries = _collect(spec)
    # The mapped ids from here on: files cannot be created under an unmapped id. The capabilities of the new user
    # namespace stay until exec (the ids are not root in it), and the mounts below need them.
    os.setresgid(SANDBOX_UID, SANDBOX_UID, SANDBOX_UID)
    os.setresuid(SANDBOX_UID, SANDBOX_UID, SANDBOX_UID)
    root = "/tmp"  # exists everywhere; a tmpfs over it in this mount namespace only
    mounts.tmpfs(root, 8)
    dev = os.path.join(root, "dev")
    os.makedirs(dev)
    mounts.tmpfs(dev, 1)
    for kind, path, value in entries:
        if kind == "link":
            os.symlink(value, _make_parent_dirs(root, path))
        elif kind in ("dir", "file"):
            inside = _make_parent_dirs(root, path)
            if kind == "dir":
                os.makedirs(inside, exist_ok=True)
            else:
                open(inside, "w").close()
            mounts.bind_read_only(f"/proc/self/fd/{value}", inside)
        elif kind == "device":
            inside = os.path.join(dev, os.path.basename(path))
            open(inside, "w").close()
            mounts.mount(f"/proc/self/fd/{value}", inside, None, MS_BIND)
        elif kind == "package":  # the kernel's own package alone, under undertow/env_core/ with empty __init__s
            package = os.path.join(root, "kernel", "undertow")
            os.makedirs(os.path.join(package, "env_core", "sandbox"))
            open(os.path.join(package, "__init__.py"), "w").close()
            open(os.path.join(package, "env_core", "__init__.py"), "w").close()
            mounts.bind_read_only(f"/proc/self/fd/{value}", os.path.join(package, "env_core", "sandbox"))
        elif kind == "hidden":
            inside = os.path.join(root, path.lstrip("/"))
            if os.path.isdir(inside):
                mounts.tmpfs(inside, 1, read_only=True)
        if isinstance(value, int):
            os.close(value)
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, os.path.join(dev, name))
    # Populated: from now on only its devices can be written to (a read-only mount does not stop writes to a device)
    mounts.mount(None, dev, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.makedirs(os.path.join(root, "proc"))
    # A private /proc: this PID namespace's processes only. Refused where the host's /proc is partly masked
    with contextlib.suppress(IsolationError):
        mounts.mount("proc", os.path.join(root, "proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    work = os.path.join(root, "tmp")
    os.makedirs(work)
    mounts.tmpfs(work, int(spec["disk_mb"]), mode="1777")
    mounts.mount(None, root, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    _enter_root(mounts, root)


def _enter_root(mounts: _Mounts, root: str) -> None:
    """Make ``root`` the root: pivot_root and detach the old root where the machine is known, else chroot."""
    os.chdir(root)
    number = PIVOT_ROOT.get(platform.machine())
    if number is not None:
        _check(mounts.libc.syscall(number, b".", b"."), "pivot_root")
        mounts.libc.umount2(b".", MNT_DETACH)  # the old root, stacked on the new one
    else:
        os.chroot(".")
    os.chdir("/tmp")


def _drop_privileges() -> None:
    """No supplementary groups, no way to gain privileges, death with the launcher. The capabilities go at exec:
    the process is not root in its namespace."""
    with contextlib.suppress(OSError):  # refused (and moot) when an unprivileged worker mapped the ids
        os.setgroups([])
    libc = _libc()
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    # After set*id, which clears it. (If the launcher is already gone, the host's pidfd kill still ends this.)
    _check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "parent death signal")


def _say(message: dict[str, Any]) -> None:
    os.write(1, json.dumps(message).encode() + b"\n")


def _hear(op: str) -> None:
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(0, 1)  # byte by byte: what follows the line belongs to the kernel
        if not chunk:
            os._exit(1)
        data += chunk
    if json.loads(data).get("op") != op:
        os._exit(1)


def launch(spec: dict[str, Any]) -> None:
    """The launcher: new namespaces, the id maps from the host, then the kernel as PID 1 of the new PID namespace,
    in its own view, without privileges. Exits with the kernel's status."""
    libc = _libc()
    _check(libc.unshare(NAMESPACES), "unshare")
    _say({"op": "unshared"})
    _hear("mapped")
    kernel = os.fork()  # the first child of a new PID namespace is its PID 1
    if kernel == 0:
        try:
            build_view(spec)
            libc.sethostname(b"sandbox", 7)
            os.setsid()  # kill(0, ...) from the code reaches its own namespace's processes, not the launcher
            _drop_privileges()
            seccomp.install()  # last: the set-up above needs mount, pivot_root and the rest
            os.execve(spec["python"], spec["argv"], spec["env"])
        except BaseException as exc:  # anything before exec: one line for the host, and out
            _fail(exc)
    _say({"op": "launched", "pid": kernel})
    # Keep no writing end of the kernel's channel: the host sees end-of-file when the kernel is gone
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    _outlive_neither(kernel)
    _, status = os.waitpid(kernel, 0)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


def _outlive_neither(kernel: int) -> None:
    """Wait until the kernel exits, or until the host is gone (its end of the kernel's input closes: a worker
    killed mid-cell), and then kill the kernel, which ends its PID namespace. Only hang-ups are watched on the
    input (no POLLIN): the messages on it are the kernel's to read."""
    pidfd = os.pidfd_open(kernel)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    poller.register(0, 0)
    while True:
        for fd, events in poller.poll():
            if fd == pidfd:
                return
            if events & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                with contextlib.suppress(OSError):
                    os.kill(kernel, signal.SIGKILL)
                return


def _fail(exc: BaseException) -> None:
    """One line on stderr, which the host shows: what failed and why."""
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"
    os.write(2, f"{SETUP_FAILED}{why}\n".encode())
    os._exit(70)


if __name__ == "__main__":
    try:
        launch(json.loads(sys.argv[1]))
    except Exception as exc:  # the namespaces could not be created: one line for the host
        _fail(exc)
