"""numpy kernels for the computations a query engine cannot do well (see DESIGN.md)."""
