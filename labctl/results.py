"""The public analysis API, as notebooks import it (`from labctl import results`): a results store
as tidy pandas DataFrames, one row per sample. The code is the read side's labctl.read.results;
this module only names it here, and nothing inside labctl imports it."""

from labctl.read.results import (
    POINT_COLUMNS,
    SAMPLE_COLUMNS,
    catalogue,
    catalogue_of,
    load,
    param_columns,
    points,
    runs,
)

__all__ = ["POINT_COLUMNS", "SAMPLE_COLUMNS", "catalogue", "catalogue_of", "load", "param_columns", "points",
           "runs"]
