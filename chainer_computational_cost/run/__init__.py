"""The hook and the entry points that run it: projection, fit, calibration
probes, network benchmark, the Trainer extension."""
