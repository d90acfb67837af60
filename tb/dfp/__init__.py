"""cocotb testbenches of the dfp block (spec dfp.md)."""
