"""Memory of the running process, as the benchmarks measure it (Linux)."""

__all__ = ["proc_status_mib"]


def proc_status_mib(field: str, pid: str = "self") -> float:
    """A memory field of /proc/<pid>/status in MiB (this process by default): VmRSS (now) or VmHWM
    (peak). Not ru_maxrss: Linux carries that over from the parent through fork and exec, so a
    child of a big process would report the parent's peak."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status: memory is measured on Linux only")
