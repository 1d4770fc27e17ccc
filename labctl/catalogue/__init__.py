"""The catalogue: what can be run and how it is measured (kernels, runtimes, studies, measures),
read through native.py, the only door to the compiled extension labctl._native."""
