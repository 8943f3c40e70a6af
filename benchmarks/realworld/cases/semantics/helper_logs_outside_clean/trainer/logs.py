HISTORY = []


def record(value):
    HISTORY.append(value)
    return value
