"""What a measured number must reach: datasheet peaks, architecture ratios, the bounds a fault crosses, pin rules."""
