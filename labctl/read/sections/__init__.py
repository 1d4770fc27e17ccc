"""The report's sections, a module per role. Each section is a function of the run's data, read
once (data.ReportData), returning its markdown lines, or none where it does not apply;
labctl.read.report keeps their order (report.SECTIONS)."""
