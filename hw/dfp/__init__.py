"""DFP16 multiply-accumulate unit with dynamic precision manager (spec dfp.md)."""
