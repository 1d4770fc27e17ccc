"""The vocabulary: plain records and helpers that every other layer speaks (metrics, schema,
samples, statistics, text, files, inputs, exit codes) and that import nothing above them."""
