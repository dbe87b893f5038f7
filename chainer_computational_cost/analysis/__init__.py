"""What analyses the records: aggregation, roofline, memory figures,
network times and scaling, calibrated time."""
