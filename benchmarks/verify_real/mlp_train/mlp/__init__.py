from mlp.train import fit
