import dataclasses as dcls
from dataclasses import MISSING
from functools import partial

import jax


def dataclass(cls=None, **kwargs):
    if cls is None:
        return partial(dataclass, **kwargs)
    cls = dcls.dataclass(frozen=True, **kwargs)(cls)
    fields = dcls.fields(cls)
    data_fields = [f.name for f in fields if f.metadata.get("pytree_node", True)]
    meta_fields = [f.name for f in fields if not f.metadata.get("pytree_node", True)]
    return jax.tree_util.register_dataclass(cls, data_fields, meta_fields)


def field(*, default=MISSING, pytree_node=True):
    return dcls.field(default=default, metadata={"pytree_node": pytree_node})
