"""tcgemm::Activation by the names tcgemm.linear takes. A module of its own,
with no torch and no compiled library, so that code which only names
activations (tcgemm.nn's patching, its CPU tests) can import it alone."""

ACTIVATIONS = {None: 0, "none": 0, "relu": 1, "gelu": 2, "gelu_tanh": 3, "silu": 4}
