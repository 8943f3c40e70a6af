import equinox as eqx


class SaveAt(eqx.Module):
    t1: bool = True
    dense: bool = False
    solver_state: bool = False
