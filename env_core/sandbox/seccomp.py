"""A seccomp filter for the kernel: the system calls that reach what neither the namespaces nor the resource limits
bound are refused, before any model-written code runs.

Refused with ``EPERM`` (``REFUSED``):

- per-user counters of the host that a user namespace does not separate: inotify and fanotify instances (charged to
  the owner of the kernel's user namespace, the worker's uid: 128 of them in a kernel made the worker's own
  ``inotify_init1`` fail), and the kernel keyrings (two kernels of the same outside uid shared keys);
- memory outside every process's resident set and outside ``/tmp``'s size: memfds, SysV shared memory, message
  queues and semaphore sets, POSIX message queues, and a tmpfs mounted in a nested user and mount namespace (so no
  new namespaces: ``unshare``, ``setns``, ``clone`` with a ``CLONE_NEW*`` flag; and no mounts);
- kernel interfaces that no code in the kernel needs and that widen what an exploit can reach: userfaultfd, bpf,
  perf_event_open, io_uring.

``clone3`` fails with ``ENOSYS``: its flags lie in memory, out of a filter's reach, and on ``ENOSYS`` the C library
falls back to ``clone``, whose flags are its first argument and are checked. Threads, ``fork`` and ``subprocess``
keep working.

Only x86-64 and ARM64 (64-bit, little-endian) get the filter: the numbers below are theirs. On x86-64, a call
through another ABI (i386 through ``int 0x80``, x32) is refused whatever it is, since its numbers differ.

Standard library only: installed by the namespace launcher just before it starts the kernel's interpreter, and by the
kernel itself at the rlimits level.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class _Arch:
    audit: int  # AUDIT_ARCH_*: what seccomp_data.arch holds for this ABI
    column: int  # which number of ``REFUSED`` is this machine's
    seccomp: int  # the seccomp(2) system call
    clone: int
    clone3: int
    foreign_bit: int  # a number with this bit set belongs to another ABI (x32 on x86-64); 0 where there is none


ARCHES = {
    "x86_64": _Arch(audit=0xC000003E, column=0, seccomp=317, clone=56, clone3=435, foreign_bit=0x40000000),
    "aarch64": _Arch(audit=0xC00000B7, column=1, seccomp=277, clone=220, clone3=435, foreign_bit=0),
}

# name: (x86-64 number, ARM64 number); None where the machine has no such call
REFUSED: dict[str, tuple[int | None, int | None]] = {
    "inotify_init": (253, None),
    "inotify_init1": (294, 26),
    "fanotify_init": (300, 262),
    "add_key": (248, 217),
    "request_key": (249, 218),
    "keyctl": (250, 219),
    "memfd_create": (319, 279),
    "memfd_secret": (447, 447),
    "shmget": (29, 194),
    "msgget": (68, 186),
    "semget": (64, 190),
    "mq_open": (240, 180),
    "unshare": (272, 97),
    "setns": (308, 268),
    "mount": (165, 40),
    "umount2": (166, 39),
    "pivot_root": (155, 41),
    "chroot": (161, 51),
    "open_tree": (428, 428),
    "move_mount": (429, 429),
    "fsopen": (430, 430),
    "fsconfig": (431, 431),
    "fsmount": (432, 432),
    "fspick": (433, 433),
    "mount_setattr": (442, 442),
    "open_tree_attr": (467, 467),
    "userfaultfd": (323, 282),
    "bpf": (321, 280),
    "perf_event_open": (298, 241),
    "io_uring_setup": (425, 425),
}
# clone's flags that create namespaces: NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
CLONE_NEW_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

EPERM, ENOSYS = 1, 38
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
# classic BPF: load a 32-bit word of seccomp_data, jumps comparing it with a constant, return a constant
_LD_W_ABS, _JEQ, _JSET, _RET = 0x20, 0x15, 0x45, 0x06
# seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]. The low half of args[0] (little-endian)
_NR, _ARCH, _ARG0_LOW = 0, 4, 16
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_TSYNC = 1, 1


def machine() -> str | None:
    """This machine's name in ``ARCHES`` when this process can take the filter, else None."""
    name = platform.machine()
    if not sys.platform.startswith("linux") or name not in ARCHES:
        return None
    # A 32-bit or big-endian interpreter on such a machine makes its calls through another ABI
    return name if struct.calcsize("P") == 8 and sys.byteorder == "little" else None


def describe() -> str:
    """One phrase for the isolation detail (``undertow doctor``)."""
    if machine() is not None:
        return "seccomp filter"
    return f"no seccomp filter on this machine ({platform.machine() or sys.platform})"


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(name: str) -> bytes:
    """The filter for machine ``name`` as struct sock_filter[]: its ABI only; each refused number returns EPERM;
    clone3 ENOSYS; clone with a namespace flag EPERM; anything else is allowed."""
    arch = ARCHES[name]
    refuse = _op(_RET, _RET_ERRNO | EPERM)
    code = [_op(_LD_W_ABS, _ARCH), _op(_JEQ, arch.audit, jt=1), refuse, _op(_LD_W_ABS, _NR)]
    if arch.foreign_bit:
        code += [_op(_JSET, arch.foreign_bit, jf=1), refuse]
    for numbers in REFUSED.values():
        number = numbers[arch.column]
        if number is not None:
            code += [_op(_JEQ, number, jf=1), refuse]
    code += [_op(_JEQ, arch.clone3, jf=1), _op(_RET, _RET_ERRNO | ENOSYS)]
    code += [_op(_JEQ, arch.clone, jf=3), _op(_LD_W_ABS, _ARG0_LOW), _op(_JSET, CLONE_NEW_FLAGS, jf=1), refuse]
    code.append(_op(_RET, _RET_ALLOW))
    return b"".join(code)


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]  # struct sock_fprog


def install() -> bool:
    """Install the filter on every thread of this process (and so on everything it starts), with ``no_new_privs``,
    which an unprivileged process needs for it. False where this machine gets no filter; ``OSError`` where the
    operating system refuses it."""
    name = machine()
    if name is None:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"seccomp: no_new_privs: {os.strerror(errno)}")
    code = program(name)
    buffer = ctypes.create_string_buffer(code, len(code))
    fprog = _Program(len(code) // 8, ctypes.addressof(buffer))
    args = (ctypes.c_long(_SECCOMP_SET_MODE_FILTER), ctypes.c_long(_SECCOMP_FILTER_FLAG_TSYNC), ctypes.byref(fprog))
    result = libc.syscall(ctypes.c_long(ARCHES[name].seccomp), *args)
    if result != 0:  # with TSYNC a positive result is a thread that could not take the filter
        errno = ctypes.get_errno() if result < 0 else 0
        raise OSError(errno, f"seccomp: {os.strerror(errno) if errno else f'thread {result} refused the filter'}")
    return True
