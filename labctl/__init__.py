"""labctl: a performance lab for actor runtimes.

Verified benchmark kernels on a fast C++ actor runtime, run in isolated worker processes.
"""

__version__ = "0.1.0"
