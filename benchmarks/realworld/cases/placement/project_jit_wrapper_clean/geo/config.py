parameters = {"jit": True}
