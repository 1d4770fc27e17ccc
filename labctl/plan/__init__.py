"""The plan: experiment files read and checked against the catalogue, and the plan of points
they make (experiment.py); a plan reaches the store as data, never as this layer's types."""
