"""A command run where the kernel refuses ``flock`` with ENOLCK, as an NFS, SMB or FUSE mount without locks does.

No such mount is needed: the command runs under a seccomp filter that answers every ``flock`` call with ENOLCK and
lets every other call through. The filter is installed by this file run as a script, which then becomes the command
(``execv``; a filter outlives it), so the command is the real one, in its own process.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import subprocess
import sys

import pytest

_FLOCK = {"x86_64": (0xC000003E, 73), "aarch64": (0xC00000B7, 32)}
"""By machine: the AUDIT_ARCH value seccomp reports, and the number of the ``flock`` system call."""
_LOAD_ABS, _JUMP_EQUAL, _RETURN = 0x20, 0x15, 0x06
_RET_ERRNO, _RET_ALLOW = 0x00050000, 0x7FFF0000
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2


class _Instruction(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Instruction))]


def refusing_flock(command: list[str]) -> list[str]:
    """``command`` run with every ``flock`` it calls refused (ENOLCK)."""
    return [sys.executable, __file__, *command]


def skip_unless_flock_can_be_refused() -> None:
    """Skip the test on a machine where the filter cannot be installed (another architecture, no seccomp)."""
    probe = "import fcntl, os; fcntl.flock(os.open('.', os.O_RDONLY), fcntl.LOCK_EX)"
    done = subprocess.run(refusing_flock([sys.executable, "-c", probe]), capture_output=True, text=True, timeout=60)
    if "No locks available" not in done.stderr:
        pytest.skip(f"cannot make flock fail here ({done.stderr.strip()[-200:]})")


def _refuse_flock() -> None:
    arch, flock = _FLOCK[platform.machine()]
    program = [
        _Instruction(_LOAD_ABS, 0, 0, 4),  # the architecture
        _Instruction(_JUMP_EQUAL, 0, 3, arch),
        _Instruction(_LOAD_ABS, 0, 0, 0),  # the system call's number
        _Instruction(_JUMP_EQUAL, 0, 1, flock),
        _Instruction(_RETURN, 0, 0, _RET_ERRNO | errno.ENOLCK),
        _Instruction(_RETURN, 0, 0, _RET_ALLOW),
    ]
    prog = _Program(len(program), (_Instruction * len(program))(*program))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) or libc.prctl(
        _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0
    ):
        raise OSError(ctypes.get_errno(), "prctl")


if __name__ == "__main__":
    _refuse_flock()
    os.execv(sys.argv[1], sys.argv[1:])
