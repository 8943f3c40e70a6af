# Trimmed from erfanzar/EasyDeL@cc8a1c9539dd:EasyDel/modules/llama/modelling_llama_flax.py (Apache-2.0); see case.toml.
import os
from typing import Any, Dict, List, Optional, Tuple, Union

from einops import einops
from flax.linen import remat

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as PS
import flax.linen as nn
from flax.linen.attention import dot_product_attention_weights
from flax.traverse_util import flatten_dict, unflatten_dict
from flax.linen import partitioning as nn_partitioning

from flax.core.frozen_dict import FrozenDict, freeze, unfreeze
from flax.linen import combine_masks, make_causal_mask

from transformers.configuration_utils import PretrainedConfig
from transformers.modeling_flax_utils import FlaxPreTrainedModel

from jax.interpreters import pxla
from transformers.modeling_flax_outputs import FlaxBaseModelOutput, FlaxCausalLMOutput, FlaxSequenceClassifierOutput

from jax.experimental.pjit import with_sharding_constraint as wsc
from fjutils import dot_product_attention_multihead

def create_sinusoidal_positions(num_pos, dim):
    inv_freq = 1.0 / (10000 ** (jnp.arange(0, dim, 2) / dim))
    sinusoid_inp = jnp.einsum("i , j -> i j", jnp.arange(num_pos), inv_freq).astype("float32")
    sin, cos = jnp.sin(sinusoid_inp), jnp.cos(sinusoid_inp)

    sentinel = dim // 2 + dim % 2
    out = jnp.zeros((num_pos, dim))
    out = out.at[:, 0: sentinel].set(sin)
    out = out.at[:, sentinel:].set(cos)
    return jnp.array(out)
