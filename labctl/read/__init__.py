"""The read side: a store read back as DataFrames (results.py), its analysis, figures, report,
comparisons, gate, histories and site. It needs neither the extension nor the plan."""
