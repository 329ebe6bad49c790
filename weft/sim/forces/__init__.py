"""Force models of the Euler integrators, one module per kind."""
