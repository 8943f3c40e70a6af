from dataclasses import dataclass


@dataclass(frozen=True)
class TrainConfig:
    lr: float = 0.1
    steps: int = 5
    hidden: int = 8
