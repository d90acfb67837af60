"""cocotb testbenches of the work distributor (hw/wdist) against golden/wdist."""
