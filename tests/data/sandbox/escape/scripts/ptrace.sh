#!/bin/sh
# ptrace.sh: PTRACE_ATTACH to the parent (skillbox); detach if it worked
exec python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
pid = os.getppid()
if libc.ptrace(16, pid, None, None) == 0:
    os.waitpid(pid, 0x40000000)
    libc.ptrace(17, pid, None, None)
    print("ptrace-ok")
else:
    print("ptrace-denied", os.strerror(ctypes.get_errno()))
'
